"""The half of a run shared by run() and run_async(): jail's argv before,
the Result (or JailError) after. No process is started here."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Sequence, Tuple, Union

from ._errors import JailError
from ._limits import Limits, duration_seconds, go_duration
from ._status import Status

# A command: a str runs as `bash -c STR` in the jail, a sequence as argv.
Command = Union[str, Sequence[str]]
PathLike = Union[str, "os.PathLike[str]"]

# How long after jail's own time limit the client stops jail itself. jail
# kills the jail at the limit and then tears it down and writes its record;
# the grace covers that, so the guard fires only when jail is stuck.
GUARD_GRACE = 5.0


@dataclass(frozen=True)
class Result:
    """How a command ended in its jail.

    exit_code is jail's exit status: the command's own, 128+N for death by
    signal N (137 for a limit's kill: see status.limit_hit), 126/127 when
    the command could not be executed / was not found (status.error says
    why). stdout and stderr are decoded as UTF-8 (bad bytes replaced);
    stdout_bytes and stderr_bytes are as the command wrote them.
    """

    exit_code: int
    stdout: str
    stderr: str
    status: Status
    stdout_bytes: bytes
    stderr_bytes: bytes
    argv: Tuple[str, ...]  # the jail invocation that ran

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


@dataclass(frozen=True)
class Invocation:
    argv: List[str]  # without the status flag: the runner adds --status-json fd:N
    guard: Optional[float]  # seconds after which the client stops jail; None: never
    stdin: Optional[bytes]  # None: the command's stdin is /dev/null


def find_jail(jail: Optional[PathLike]) -> str:
    """The binary: jail=, else $JAIL_BIN, else `jail` on PATH."""
    if jail is not None:
        return os.fspath(jail)
    env = os.environ.get("JAIL_BIN")
    if env:
        return env
    found = shutil.which("jail")
    if found is None:
        raise JailError("jail: not found: pass jail=PATH, set JAIL_BIN, or put jail on PATH")
    return found


def build(
    cmd: Command,
    *,
    profile: Optional[PathLike],
    session: Optional[str],
    workspace: Optional[PathLike],
    allow: Sequence[str],
    limits: Optional[Limits],
    env: Optional[Mapping[str, str]],
    timeout: Optional[float],
    stdin: Union[str, bytes, None],
    jail: Optional[PathLike],
    extra_args: Sequence[str],
) -> Invocation:
    """jail's argv for one run, its guard and its stdin."""
    if isinstance(cmd, str):
        argv_cmd = ["bash", "-c", cmd]
    else:
        argv_cmd = [os.fspath(a) for a in cmd]
        if not argv_cmd:
            raise ValueError("empty command")
    argv = [find_jail(jail), "--no-tty"]
    if profile is not None:
        argv += ["--profile", os.fspath(profile)]
    if session is not None:
        argv += ["--session", session]
    if workspace is not None:
        argv += ["--workspace", os.fspath(workspace)]
    if isinstance(allow, str):  # a lone host, not its characters
        allow = (allow,)
    for host in allow:
        argv += ["--allow", host]
    if limits is not None:
        argv += limits.to_args()
    # timeout= is jail's --time-limit (jail kills the whole jail, and the
    # record says timed_out); with limits.time too, the smaller one holds.
    times = [t for t in (timeout, limits.time if limits else None) if t is not None]
    guard: Optional[float] = None
    if times:
        limit = min(times, key=lambda t: _seconds_or_inf(t))
        argv += ["--time-limit", go_duration(limit)]
        secs = duration_seconds(limit)
        if secs:  # 0 means no limit, so no guard; None: a duration only jail reads
            guard = secs + GUARD_GRACE
    for key, value in (env or {}).items():
        if not key or "=" in key:
            raise ValueError(f"env key {key!r}: want a name without '='")
        argv += ["--env", f"{key}={value}"]
    argv += [os.fspath(a) for a in extra_args]
    argv += ["--", *argv_cmd]
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return Invocation(argv=argv, guard=guard, stdin=data)


def _seconds_or_inf(t: Union[float, str]) -> float:
    s = duration_seconds(t)
    return float("inf") if s is None or s == 0 else s


def with_status_fd(argv: List[str], fd: int) -> List[str]:
    """argv with --status-json fd:FD right after the binary."""
    return [argv[0], "--status-json", f"fd:{fd}", *argv[1:]]


def jail_line(stderr: str) -> str:
    """jail's own one-line message: the last stderr line it wrote ("jail: ...")."""
    for line in reversed(stderr.splitlines()):
        if line.startswith("jail: "):
            return line
    return ""


def finish(argv: Sequence[str], code: int, out: bytes, err: bytes, record: bytes) -> Result:
    """The Result of a finished jail, or JailError when jail itself failed."""
    stdout = out.decode("utf-8", "replace")
    stderr = err.decode("utf-8", "replace")
    status: Optional[Status] = None
    if record.strip():
        try:
            raw: Any = json.loads(record)
        except ValueError as e:
            raise JailError(
                f"jail: unreadable status record ({e}): {record[:200]!r}",
                exit_code=code, stdout=stdout, stderr=stderr,
            ) from None
        if isinstance(raw, dict):
            status = Status.from_dict(raw)
    if status is None:
        why = jail_line(stderr) or f"jail: exited {code} and wrote no status record"
        raise JailError(why, exit_code=code, stdout=stdout, stderr=stderr)
    # 125 is jail's own failure only when the record says so: a command
    # may exit 125 itself, and then the record has no error.
    if code == 125 and status.error:
        raise JailError(
            jail_line(stderr) or f"jail: {status.error}",
            status=status, exit_code=code, stdout=stdout, stderr=stderr,
        )
    return Result(
        exit_code=code,
        stdout=stdout,
        stderr=stderr,
        status=status,
        stdout_bytes=out,
        stderr_bytes=err,
        argv=tuple(argv),
    )
