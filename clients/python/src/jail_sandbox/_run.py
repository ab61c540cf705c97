"""run(): one command in one jail, from synchronous code."""

from __future__ import annotations

import os
import subprocess
import threading
from typing import List, Mapping, Optional, Sequence, Union

from ._command import Command, PathLike, Result, build, finish, with_status_fd
from ._errors import JailError, JailTimeout
from ._limits import Limits

# How long jail has to end after SIGTERM before it gets SIGKILL.
KILL_GRACE = 2.0


def run(
    cmd: Command,
    *,
    profile: Optional[PathLike] = None,
    session: Optional[str] = None,
    workspace: Optional[PathLike] = None,
    allow: Sequence[str] = (),
    limits: Optional[Limits] = None,
    env: Optional[Mapping[str, str]] = None,
    timeout: Optional[float] = None,
    stdin: Union[str, bytes, None] = None,
    jail: Optional[PathLike] = None,
    extra_args: Sequence[str] = (),
) -> Result:
    """Runs cmd in a fresh jail and returns how it ended.

    cmd: a str runs as ``bash -c cmd`` inside the jail (so it may use
    pipes, ``&&``, redirections); a sequence runs as argv, no shell.
    profile: a profile name or a .toml path (jail's default: "default").
    session / workspace: the session's kept workspace, or a host directory,
    read-write at /workspace. allow: hosts (``HOST[:PORT]``, ``*.DOMAIN``)
    the jail may reach through jail's proxy. limits: see Limits.
    env: variables set in the command's environment (``--env K=V``).
    timeout: seconds; jail's own ``--time-limit`` (the whole jail is killed,
    exit 137, ``status.timed_out``): a Result, not an exception. Should jail
    itself not end within timeout + 5 s, the client sends it SIGTERM, then
    SIGKILL, and raises JailTimeout.
    stdin: the command's input; None gives it /dev/null.
    jail: the binary (default $JAIL_BIN, else ``jail`` on PATH).
    extra_args: more run flags, put after the ones above (the last of a
    repeated flag wins).

    The command always runs without a terminal (``--no-tty``); the status
    record comes over a pipe of its own (``--status-json fd:N``), read
    while the command runs, never from stdout.

    Raises JailError when jail refused or failed (exit 125 with the
    record's error, or no record): its message is jail's one line.
    """
    inv = build(
        cmd, profile=profile, session=session, workspace=workspace, allow=allow,
        limits=limits, env=env, timeout=timeout, stdin=stdin, jail=jail,
        extra_args=extra_args,
    )
    r, w = os.pipe()
    argv = with_status_fd(inv.argv, w)
    record: List[bytes] = []
    reader = threading.Thread(target=_read_all, args=(r, record), daemon=True)
    try:
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if inv.stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(w,),
            )
        except OSError as e:
            raise JailError(f"jail: cannot start {argv[0]}: {e}") from e
        finally:
            os.close(w)  # jail holds the write end now; EOF when it is done
        reader.start()
        try:
            out, err = proc.communicate(inv.stdin, timeout=inv.guard)
        except subprocess.TimeoutExpired:
            out, err = _stop(proc)
            raise JailTimeout(
                f"jail: still running {inv.guard:g} s after it was started with a time limit; "
                f"stopped it (pid {proc.pid})",
                pid=proc.pid, exit_code=proc.returncode,
                stdout=out.decode("utf-8", "replace"), stderr=err.decode("utf-8", "replace"),
            ) from None
        except BaseException:  # ^C, or anything else: never leave a jail running
            _stop(proc)
            raise
        # jail closed its end when it wrote the record; the reader is done
        # or about to be (a wait here only if jail leaked the fd).
        reader.join(timeout=5)
        return finish(inv.argv, proc.returncode, out, err, b"".join(record))
    finally:
        if reader.is_alive():  # jail is gone: its end of the pipe closes shortly
            reader.join(timeout=1)
        if not reader.is_alive():
            os.close(r)  # else a process jail left holds the write end: leave the fd to the reader


def _read_all(fd: int, into: List[bytes]) -> None:
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        into.append(chunk)


def _stop(proc: "subprocess.Popen[bytes]") -> "tuple[bytes, bytes]":
    """SIGTERM to jail, SIGKILL after KILL_GRACE; what it wrote meanwhile."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(KILL_GRACE)
        except subprocess.TimeoutExpired:
            proc.kill()
    try:
        out, err = proc.communicate(timeout=KILL_GRACE)
    except subprocess.TimeoutExpired:
        # jail is dead; a process that inherited its stdout holds it open.
        out, err = b"", b""
    return out or b"", err or b""
