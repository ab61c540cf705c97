"""run_async: the same results as run(), concurrent runs, and a cancelled
call stops its jail."""

from __future__ import annotations

import asyncio
import os
import time
import unittest

import support
from jail_sandbox import JailError, JailTimeout, _command, run_async


class AsyncTest(unittest.IsolatedAsyncioTestCase):
    def setUp(self) -> None:
        self.ws = support.workspace()

    async def test_output_and_exit_code(self) -> None:
        r = await run_async("echo out; echo err >&2; exit 3", profile="agent", workspace=self.ws)
        self.assertEqual((r.exit_code, r.stdout, r.stderr), (3, "out\n", "err\n"))
        self.assertEqual(r.status.exit_code, 3)

    async def test_stdin(self) -> None:
        r = await run_async(["wc", "-c"], profile="agent", workspace=self.ws, stdin=b"y" * 2_000_000)
        self.assertEqual(r.stdout.strip(), "2000000")

    async def test_time_limit(self) -> None:
        r = await run_async("sleep 30", profile="agent", workspace=self.ws, timeout=1)
        self.assertEqual(r.exit_code, 137)
        self.assertTrue(r.status.timed_out)

    async def test_jail_error(self) -> None:
        with self.assertRaises(JailError) as cm:
            await run_async("true", profile="no-such-profile")
        self.assertIn('no profile "no-such-profile"', cm.exception.message)

    async def test_guard_stops_a_jail_that_outlives_its_limit(self) -> None:
        old = _command.GUARD_GRACE
        _command.GUARD_GRACE = 1.0
        try:
            with self.assertRaises(JailTimeout) as cm:
                await run_async("echo begun; sleep 60", profile="agent", workspace=self.ws,
                                timeout=0.5, extra_args=["--time-limit", "60s"])
        finally:
            _command.GUARD_GRACE = old
        self.assertEqual(cm.exception.stdout, "begun\n")
        with self.assertRaises(ProcessLookupError):
            os.kill(cm.exception.pid, 0)

    async def test_concurrent_runs(self) -> None:
        t0 = time.monotonic()
        rs = await asyncio.gather(*(
            run_async(f"sleep 1; echo {i}", profile="agent", workspace=support.workspace())
            for i in range(4)
        ))
        self.assertEqual([r.stdout for r in rs], [f"{i}\n" for i in range(4)])
        self.assertLess(time.monotonic() - t0, 3.5)  # they ran at once

    async def test_cancel_stops_jail(self) -> None:
        marker = f"{os.getpid()}{int(time.time()) % 100000}1"
        task = asyncio.ensure_future(
            run_async(f"exec sleep {marker}", profile="agent", workspace=self.ws, timeout=60))
        await asyncio.sleep(1)
        self.assertTrue(_running(marker))
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.5)
        self.assertFalse(_running(marker))


def _running(marker: str) -> bool:
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if f.read() == f"sleep\0{marker}\0".encode():
                        return True
            except OSError:
                pass
    return False


if __name__ == "__main__":
    unittest.main()
