"""Exit codes and time: the command's status, 127/126, and the time limit
(jail's, a Result) against the client's guard (JailTimeout)."""

from __future__ import annotations

import os
import time
import unittest

import support
from jail_sandbox import JailTimeout, Limits, _command, run


class ExitTest(unittest.TestCase):
    def setUp(self) -> None:
        self.ws = support.workspace()

    def test_exit_codes(self) -> None:
        for code in (0, 3, 125):  # 125 from the command itself is its own, not jail's
            r = run(f"exit {code}", profile="agent", workspace=self.ws)
            self.assertEqual(r.exit_code, code)
            self.assertEqual(r.status.exit_code, code)
            self.assertEqual(r.status.error, "")

    def test_not_found_is_127(self) -> None:
        r = run(["no-such-command-xyz"], profile="agent", workspace=self.ws)
        self.assertEqual(r.exit_code, 127)
        self.assertIn("no-such-command-xyz", r.status.error)
        r = run("no-such-command-xyz", profile="agent", workspace=self.ws)
        self.assertEqual(r.exit_code, 127)
        self.assertIn("command not found", r.stderr)

    def test_not_executable_is_126(self) -> None:
        r = run(["/etc/passwd"], profile="agent", workspace=self.ws)
        self.assertEqual(r.exit_code, 126)
        self.assertIn("Permission denied", r.status.error)

    def test_signal_is_128_plus_n(self) -> None:
        r = run("kill -TERM $$", profile="agent", workspace=self.ws)
        self.assertEqual(r.exit_code, 143)
        self.assertEqual(r.status.signal_name, "SIGTERM")

    def test_timeout_is_jails_time_limit(self) -> None:
        t0 = time.monotonic()
        r = run("echo started; sleep 30", profile="agent", workspace=self.ws, timeout=1)
        took = time.monotonic() - t0
        self.assertEqual(r.exit_code, 137)
        self.assertTrue(r.status.timed_out)
        self.assertEqual(r.status.limit_hit, "timed_out")
        self.assertEqual(r.stdout, "started\n")
        self.assertIn("jail: killed: time limit", r.stderr)
        self.assertLess(took, 1 + _command.GUARD_GRACE)
        self.assertIn("--time-limit", r.argv)
        self.assertEqual(r.argv[r.argv.index("--time-limit") + 1], "1s")

    def test_limits_time_and_timeout_take_the_smaller(self) -> None:
        r = run("sleep 30", profile="agent", workspace=self.ws, timeout=20, limits=Limits(time="1500ms"))
        self.assertTrue(r.status.timed_out)
        self.assertEqual(r.argv[r.argv.index("--time-limit") + 1], "1500ms")

    def test_guard_stops_a_jail_that_outlives_its_limit(self) -> None:
        # A later --time-limit (extra_args win) makes jail outlive timeout=
        # plus the grace: the client stops jail itself, and the jail with it.
        marker = f"{os.getpid()}{int(time.time()) % 100000}"
        old = _command.GUARD_GRACE
        _command.GUARD_GRACE = 1.0
        try:
            t0 = time.monotonic()
            with self.assertRaises(JailTimeout) as cm:
                run(f"echo begun; exec sleep {marker}", profile="agent", workspace=self.ws,
                    timeout=0.5, extra_args=["--time-limit", "60s"])
            took = time.monotonic() - t0
        finally:
            _command.GUARD_GRACE = old
        self.assertLess(took, 6)
        self.assertIn("still running", cm.exception.message)
        self.assertEqual(cm.exception.stdout, "begun\n")
        with self.assertRaises(ProcessLookupError):
            os.kill(cm.exception.pid, 0)
        self.assertFalse(_sleeping(marker), "the jail's sleep outlived jail")


def _sleeping(marker: str) -> bool:
    """Whether a `sleep MARKER` runs anywhere on the host."""
    deadline = time.monotonic() + 2  # the kernel reaps a killed jail's PID 1 shortly after
    while True:
        found = False
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if f.read() == f"sleep\0{marker}\0".encode():
                        found = True
            except OSError:
                pass
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


if __name__ == "__main__":
    unittest.main()
