"""examples/agent_loop.py runs, and shows what it says it shows."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest

import support

EXAMPLE = os.path.join(os.path.dirname(support.HERE), "examples", "agent_loop.py")


class ExampleTest(unittest.TestCase):
    def test_agent_loop(self) -> None:
        env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(support.HERE), "src"))
        p = subprocess.run([sys.executable, EXAMPLE], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout
        for want in (
            "45\n[exit 0]",  # output and exit code
            "[exit 1]",  # grep found nothing
            "[jail refused network tcp example.com:443: not on the allowlist",  # a denial
            "[jail refused syscall unshare",
            "[exit 137]\n[killed: time limit",  # a limit hit
            "[output truncated",
            "=== final answer: sum.py prints 45",
        ):
            self.assertIn(want, out)


if __name__ == "__main__":
    unittest.main()
