"""An agent's session of 50 tool calls, one after another: every one succeeds."""

from __future__ import annotations

import time
import unittest

import support
from jail_sandbox import run, sessions


class ManyCallsTest(unittest.TestCase):
    def test_fifty_sequential_calls(self) -> None:
        sid = support.session_id()
        times = []
        for i in range(50):
            t0 = time.monotonic()
            r = run(f"echo {i} >> log; wc -l < log", profile="agent", session=sid, timeout=30)
            times.append(time.monotonic() - t0)
            self.assertEqual((r.exit_code, r.stdout, r.stderr), (0, f"{i + 1}\n", ""), f"call {i}")
        mean = sum(times) / len(times)
        print(f"\n50 sequential tool calls: mean {mean * 1000:.1f} ms, max {max(times) * 1000:.1f} ms",
              end=" ", flush=True)
        sessions.rm(sid)


if __name__ == "__main__":
    unittest.main()
