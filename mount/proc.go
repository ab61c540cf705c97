package mount

// What the jail's /proc hides or freezes, after runc's defaults. The jail
// has its own pid namespace, so its procfs lists only its own processes; these
// are the system-wide files that are left.
var (
	// procMaskedFiles are covered with /dev/null: kernel memory and logs
	// (kcore, kmsg), timer and scheduler internals that leak host activity
	// and addresses (timer_list, sched_debug, latency_stats, timer_stats),
	// the keyring list (keys), and, beyond runc, the kernel command line
	// (platforms pass tokens there) and the host's interrupt counts.
	procMaskedFiles = []string{"kcore", "kmsg", "keys", "latency_stats", "timer_list", "timer_stats", "sched_debug", "cmdline", "interrupts"}
	// procMaskedDirs are covered with an empty read-only tmpfs: hardware
	// control interfaces (acpi, scsi, asound).
	procMaskedDirs = []string{"acpi", "asound", "scsi"}
	// procReadOnly are bound read-only onto themselves: kernel tunables
	// (sys), the magic SysRq trigger, interrupt routing, buses and
	// filesystem knobs.
	procReadOnly = []string{"bus", "fs", "irq", "sys", "sysrq-trigger"}
)

// devNodes are the host device nodes bound into the jail's /dev: the
// harmless character devices every program expects. tty only reaches the
// command's own controlling terminal, which a new session does not have.
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}
