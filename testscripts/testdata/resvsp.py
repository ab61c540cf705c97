# resvsp.py FILE: asks for 1 GiB of FILE with each preallocation ioctl
# (fs/ioctl.c: FS_IOC_RESVSP, FS_IOC_RESVSP64, FS_IOC_ZERO_RANGE) and
# prints each request and its errno (0: it allocated).
import fcntl, os, struct, sys

fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o644)
# struct space_resv: l_type, l_whence, l_start, l_len, l_sysid, l_pid, l_pad[4]
resv = struct.pack("=hh4xqqiI4i", 0, 0, 0, 1 << 30, 0, 0, 0, 0, 0, 0)
for req in (0x40305828, 0x4030582A, 0x4030583D):
    try:
        fcntl.ioctl(fd, req, resv)
        err = 0
    except OSError as e:
        err = e.errno
    print("%x %d" % (req, err))
