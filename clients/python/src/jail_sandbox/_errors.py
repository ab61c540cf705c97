"""The exceptions: jail's own failures, never the command's.

A command that exits non-zero, is killed by a limit or is not found is a
Result, not an exception: the agent reads it as an observation. Only when
jail itself could not run the command as asked (exit 125 with the record's
``error``, or no record at all) or the client had to stop jail does a call
raise.
"""

from __future__ import annotations

from typing import Optional

from ._status import Status


class JailError(Exception):
    """jail refused or failed: the command did not run as asked.

    ``message`` is jail's one line ("jail: load profile: no profile ..."),
    which says what failed and how to fix it; ``status`` the record (None
    when jail wrote none), ``exit_code`` jail's exit status (None when it
    never started), ``stderr`` everything jail and the command wrote there.
    """

    def __init__(
        self,
        message: str,
        *,
        status: Optional[Status] = None,
        exit_code: Optional[int] = None,
        stdout: str = "",
        stderr: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.exit_code = exit_code
        self.stdout = stdout
        self.stderr = stderr


class JailTimeout(JailError):
    """The client's guard stopped jail: it ran past its own time limit plus a grace.

    jail's ``--time-limit`` (which ``timeout=`` sets) ends a slow command
    itself, and that is a Result with ``status.timed_out``. This is raised
    only when jail did not end by then (SIGTERM, then SIGKILL 2 s later,
    sent to jail's PID: the whole jail dies with jail). ``stdout`` and
    ``stderr`` hold what was read before.
    """

    def __init__(
        self,
        message: str,
        *,
        pid: int,
        exit_code: Optional[int] = None,
        stdout: str = "",
        stderr: str = "",
    ) -> None:
        super().__init__(message, exit_code=exit_code, stdout=stdout, stderr=stderr)
        self.pid = pid
