"""jail_sandbox: run one command in one fresh jail, from Python.

A client of the ``jail`` binary (standard library only): ``run`` and
``run_async`` build jail's argv, read the status record from a pipe of
its own, and return a Result; jail's own failures raise JailError.
``sessions`` wraps ``jail sessions``.
"""

from . import sessions
from ._async import run_async
from ._command import GUARD_GRACE, Command, Result
from ._errors import JailError, JailTimeout
from ._limits import Limits
from ._run import run
from ._status import HostDenial, Status, SyscallDenial

__all__ = [
    "GUARD_GRACE",
    "Command",
    "HostDenial",
    "JailError",
    "JailTimeout",
    "Limits",
    "Result",
    "Status",
    "SyscallDenial",
    "run",
    "run_async",
    "sessions",
]
__version__ = "0.1.0"
