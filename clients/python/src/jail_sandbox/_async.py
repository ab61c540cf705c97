"""run_async(): run() for asyncio code, the same arguments and Result.

Cancelling the awaiting task stops jail (SIGTERM, then SIGKILL) before the
cancellation goes on: a cancelled tool call leaves no jail behind.
"""

from __future__ import annotations

import asyncio
import os
from typing import List, Mapping, Optional, Sequence, Union

from ._command import Command, PathLike, Result, build, finish, with_status_fd
from ._errors import JailError, JailTimeout
from ._limits import Limits
from ._run import KILL_GRACE


async def run_async(
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
    """Runs cmd in a fresh jail without blocking the event loop; see run()."""
    inv = build(
        cmd, profile=profile, session=session, workspace=workspace, allow=allow,
        limits=limits, env=env, timeout=timeout, stdin=stdin, jail=jail,
        extra_args=extra_args,
    )
    loop = asyncio.get_running_loop()
    r, w = os.pipe()
    argv = with_status_fd(inv.argv, w)
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE if inv.stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            pass_fds=(w,),
        )
    except OSError as e:
        os.close(r)
        raise JailError(f"jail: cannot start {argv[0]}: {e}") from e
    finally:
        os.close(w)
    # The record's pipe, read as the command runs: jail fails the run if
    # its record is not taken within 2 s.
    status_reader = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(status_reader), os.fdopen(r, "rb", buffering=0)
    )
    out: List[bytes] = []
    err: List[bytes] = []
    record: List[bytes] = []
    assert proc.stdout is not None and proc.stderr is not None
    tasks = [
        asyncio.ensure_future(c)
        for c in (
            _drain(proc.stdout, out),
            _drain(proc.stderr, err),
            _drain(status_reader, record),
            _feed(proc, inv.stdin),
            proc.wait(),
        )
    ]
    try:
        try:
            _, pending = await asyncio.wait(tasks, timeout=inv.guard)
        except BaseException:  # cancelled: never leave a jail running
            await asyncio.shield(_stop(proc))
            raise
        if pending:
            await _stop(proc)
            # What jail and the command wrote before they died.
            await asyncio.wait(pending, timeout=KILL_GRACE)
            raise JailTimeout(
                f"jail: still running {inv.guard:g} s after it was started with a time limit; "
                f"stopped it (pid {proc.pid})",
                pid=proc.pid, exit_code=proc.returncode,
                stdout=b"".join(out).decode("utf-8", "replace"),
                stderr=b"".join(err).decode("utf-8", "replace"),
            )
        for t in tasks:
            t.result()  # an unexpected failure of a reader is the caller's to see
    finally:
        for t in tasks:
            t.cancel()
        transport.close()
    assert proc.returncode is not None
    return finish(inv.argv, proc.returncode, b"".join(out), b"".join(err), b"".join(record))


async def _drain(stream: asyncio.StreamReader, into: List[bytes]) -> None:
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            return
        into.append(chunk)


async def _feed(proc: "asyncio.subprocess.Process", data: Optional[bytes]) -> None:
    if proc.stdin is None:
        return
    try:
        if data:
            proc.stdin.write(data)
            await proc.stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the command did not read all of it, as with a shell pipe
    finally:
        proc.stdin.close()


async def _stop(proc: "asyncio.subprocess.Process") -> None:
    """SIGTERM to jail, SIGKILL after KILL_GRACE."""
    if proc.returncode is not None:
        return
    try:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), KILL_GRACE)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
    except ProcessLookupError:
        pass
