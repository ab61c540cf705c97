package seccomp

import libseccomp "github.com/seccomp/libseccomp-golang"

// Group is a named set of syscalls, in the spirit of systemd's
// SystemCallFilter groups, usable in a policy as "@name".
type Group struct {
	Doc      string   // what the group is, and why a policy would deny it
	Syscalls []string // may name other groups
}

// Groups are the named syscall sets policies may use. The table is data:
// every name in it is checked against libseccomp by a test. A group may
// name syscalls only some architectures have (ioperm is x86's, pciconfig_*
// arm's and powerpc's); the compiler leaves out those the target lacks.
//
// The groups follow systemd's where one exists, but @privileged keeps to
// calls that need a capability a jail never holds: the setuid family is
// out, since an unprivileged process may drop or switch among its own ids.
var Groups = map[string]Group{
	"@mount": {
		Doc: "Mounting, the new mount API and changing the root. A jail's mounts are built " +
			"before its command runs and are locked; these calls would only reach the " +
			"kernel's mount code, a long source of privilege escalations (CVE-2022-0185 " +
			"in fsconfig), from inside a user namespace. Docker denies them without " +
			"CAP_SYS_ADMIN (chroot: CAP_SYS_CHROOT).",
		Syscalls: []string{
			"mount", "umount", "umount2",
			"fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
			"pivot_root", "chroot",
		},
	},
	"@namespaces": {
		Doc: "Entering or making namespaces: unshare and setns. A new user namespace " +
			"hands its creator every capability over it, and with them kernel code " +
			"(netfilter, mount, BPF) unprivileged users never otherwise reach: most " +
			"container escapes of the last decade start here (CVE-2022-0492, " +
			"CVE-2023-32233, CVE-2024-1086). clone and clone3 also make namespaces; " +
			"that is their CLONE_NEW* flags, which a group cannot say: policies deny " +
			"them with argument conditions on clone (one rule per flag) and answer " +
			"clone3, whose flags are behind a pointer, with ENOSYS.",
		Syscalls: []string{"unshare", "setns"},
	},
	"@module": {
		Doc: "Loading and unloading kernel modules, and the calls of the pre-2.6 module " +
			"interface. Needs CAP_SYS_MODULE in the host's namespace, which no jail " +
			"has; denied so nothing asks the kernel to try.",
		Syscalls: []string{
			"init_module", "finit_module", "delete_module",
			"create_module", "query_module", "get_kernel_syms",
		},
	},
	"@reboot": {
		Doc: "Rebooting and loading a new kernel to boot into (kexec). CAP_SYS_BOOT: " +
			"in a pid namespace reboot only ends the namespace, which a jail's " +
			"own PID 1 decides.",
		Syscalls: []string{"reboot", "kexec_load", "kexec_file_load"},
	},
	"@swap": {
		Doc:      "Turning swap areas on and off: host-wide, CAP_SYS_ADMIN.",
		Syscalls: []string{"swapon", "swapoff"},
	},
	"@raw-io": {
		Doc: "Raw access to I/O ports and PCI configuration space (x86's ioperm and " +
			"iopl; arm's and powerpc's pciconfig_*; s390's PCI MMIO): hardware " +
			"below the kernel, CAP_SYS_RAWIO.",
		Syscalls: []string{
			"ioperm", "iopl",
			"pciconfig_iobase", "pciconfig_read", "pciconfig_write",
			"s390_pci_mmio_read", "s390_pci_mmio_write",
		},
	},
	"@clock": {
		Doc: "Setting the system clock, which time namespaces do not virtualise: it is " +
			"the host's, and needs CAP_SYS_TIME there. adjtimex and clock_adjtime " +
			"with modes 0 only read the clock's state (ntp_gettime, ntp_adjtime " +
			"queries), and the kernel refuses their writes without that capability " +
			"anyway; the struct with the modes is behind a pointer a filter cannot " +
			"read, so the default policy denies only the setters named here and " +
			"leaves those two to the kernel, as Docker does.",
		Syscalls: []string{
			"settimeofday", "stime", "clock_settime", "clock_settime64",
			"adjtimex", "clock_adjtime", "clock_adjtime64",
		},
	},
	"@debug": {
		Doc: "Reaching into another process: tracing it (ptrace), reading or writing " +
			"its memory (process_vm_*), taking its file descriptors (pidfd_getfd), " +
			"advising on its memory (process_madvise), comparing kernel objects " +
			"between processes (kcmp, which orders kernel pointers: a KASLR leak), " +
			"and the performance-monitoring and profiling interfaces (perf_event_open, " +
			"a steady source of kernel CVEs such as CVE-2013-2094 and CVE-2023-6931; " +
			"lookup_dcookie, oprofile's). Inside a jail every process has the same " +
			"uid, so uid checks do not keep one from another; these calls are the " +
			"widest ways in (a process can still write another's memory through " +
			"/proc/PID/mem, which reaches only processes under the same filter). " +
			"A jail runs no debuggers. Docker allows ptrace and process_vm_* on " +
			"kernels from 4.8 on; jail does not.",
		Syscalls: []string{
			"ptrace", "process_vm_readv", "process_vm_writev",
			"pidfd_getfd", "process_madvise", "kcmp",
			"perf_event_open", "lookup_dcookie",
			"sys_debug_setcontext",
		},
	},
	"@keyring": {
		Doc: "The kernel keyring, which is only partly namespaced (Docker's reason " +
			"to deny it): keys belong to uids, and a jail could reach keys of its " +
			"host uid's other processes. A jail gets a session keyring of its own " +
			"before its command runs and needs no more. The code has a history " +
			"(CVE-2016-0728).",
		Syscalls: []string{"add_key", "keyctl", "request_key"},
	},
	"@obsolete": {
		Doc: "Calls Linux no longer implements, or never did (reserved slots such as " +
			"afs_syscall, tuxcall, vserver), and the legacy ones systemd lists: " +
			"nothing current calls them, and what still answers is old, rarely " +
			"exercised code (uselib: CVE-2004-1235). nfsservctl was removed in " +
			"Linux 3.1.",
		Syscalls: []string{
			"_sysctl", "afs_syscall", "bdflush", "break", "create_module", "ftime",
			"get_kernel_syms", "getpmsg", "gtty", "idle", "lock", "mpx", "nfsservctl",
			"prof", "profil", "putpmsg", "query_module", "security", "sgetmask",
			"ssetmask", "stty", "sysfs", "tuxcall", "ulimit", "uselib", "ustat",
			"vserver",
		},
	},
	"@cpu-emulation": {
		Doc: "Emulating other CPU modes: x86's local descriptor table (modify_ldt, " +
			"for 16-bit code under Wine or DOSEMU) and vm86, powerpc's subpage_prot " +
			"and switch_endian. Nothing a jail runs needs them, and modify_ldt's " +
			"corner cases have been exploitable (CVE-2014-8133, CVE-2015-3290).",
		Syscalls: []string{"modify_ldt", "subpage_prot", "switch_endian", "vm86", "vm86old"},
	},
	"@io-uring": {
		Doc: "io_uring: a second syscall interface, whose operations seccomp cannot " +
			"see, so it would bypass every other rule (an openat through a ring " +
			"is never filtered); and among the kernel's richest sources of " +
			"privilege escalations (CVE-2022-29582, CVE-2023-2598). Docker denies " +
			"it too.",
		Syscalls: []string{"io_uring_setup", "io_uring_enter", "io_uring_register"},
	},
	"@bpf": {
		Doc: "Loading eBPF programs and maps: the verifier is a large attack surface " +
			"(CVE-2021-3490, CVE-2022-23222); needs CAP_BPF unless the host allows " +
			"unprivileged BPF. Classic socket filters (SO_ATTACH_FILTER) are " +
			"setsockopt and unaffected.",
		Syscalls: []string{"bpf"},
	},
	"@userfaultfd": {
		Doc: "Handling page faults in user space: it lets an exploit stop the kernel " +
			"mid-copy at a fault it chooses, which turns narrow kernel races into " +
			"reliable ones: the reason the sysctl vm.unprivileged_userfaultfd " +
			"exists. Docker denies it.",
		Syscalls: []string{"userfaultfd"},
	},
	"@accounting": {
		Doc: "Process accounting (acct) and disk quotas (quotactl, quotactl_fd): host " +
			"administration, CAP_SYS_PACCT and CAP_SYS_ADMIN.",
		Syscalls: []string{"acct", "quotactl", "quotactl_fd"},
	},
	"@handles": {
		Doc: "File handles: open_by_handle_at opens a file from a handle without a " +
			"path walk, so outside any mount the opener was given; the Shocker " +
			"escape from Docker (2014) used it. It needs CAP_DAC_READ_SEARCH. " +
			"name_to_handle_at only makes handles, which are of no use in a jail " +
			"without the other; the default policy answers it with EOPNOTSUPP " +
			"(ENOTSUP), as a filesystem without handles would, so callers fall back to paths.",
		Syscalls: []string{"open_by_handle_at", "name_to_handle_at"},
	},
	"@mempolicy": {
		Doc: "NUMA memory placement: setting policies and moving pages, including " +
			"another process's (migrate_pages, move_pages). Docker denies these " +
			"without CAP_SYS_NICE; programs that use them (libnuma) treat EPERM " +
			"as no NUMA.",
		Syscalls: []string{
			"get_mempolicy", "set_mempolicy", "set_mempolicy_home_node",
			"mbind", "move_pages", "migrate_pages",
		},
	},
	"@syslog": {
		Doc: "Reading and clearing the kernel's log buffer (syslog(2), what dmesg " +
			"uses): it is the host's, holds kernel addresses and other tenants' " +
			"messages. CAP_SYSLOG, or kernel.dmesg_restrict = 0.",
		Syscalls: []string{"syslog"},
	},
	"@privileged": {
		Doc: "Every call that does nothing without a capability in the host's " +
			"namespace that a jail never holds (CAP_SYS_ADMIN, CAP_SYS_MODULE, " +
			"CAP_SYS_BOOT, CAP_SYS_RAWIO, CAP_SYS_TIME, CAP_SYS_PACCT, CAP_SYSLOG, " +
			"CAP_DAC_READ_SEARCH, CAP_SYS_TTY_CONFIG): denying them costs nothing " +
			"and keeps their code out of reach. Unlike systemd's group, not the " +
			"setuid family, which an unprivileged process may use on its own ids. " +
			"fanotify_init has an unprivileged mode since Linux 5.13, limited to " +
			"watching what the caller can read; Docker still denies it.",
		Syscalls: []string{
			"@mount", "@module", "@reboot", "@swap", "@raw-io", "@accounting", "@syslog",
			"settimeofday", "stime", "clock_settime", "clock_settime64",
			"open_by_handle_at", "lookup_dcookie", "nfsservctl",
			"sethostname", "setdomainname", "vhangup", "fanotify_init",
		},
	},
}

// Known reports whether libseccomp knows the syscall on any architecture:
// policies may name syscalls another architecture has (ioperm on arm64 is
// simply absent from the compiled filter).
func Known(name string) bool {
	_, err := libseccomp.GetSyscallFromName(name)
	return err == nil
}
