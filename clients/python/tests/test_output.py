"""stdout, stderr and stdin: separate, whole, never mixed with the record."""

from __future__ import annotations

import unittest

import support
from jail_sandbox import Limits, run


class OutputTest(unittest.TestCase):
    def setUp(self) -> None:
        self.ws = support.workspace()

    def test_stdout_and_stderr_are_separate(self) -> None:
        r = run("echo out; echo err >&2", profile="agent", workspace=self.ws)
        self.assertEqual(r.exit_code, 0)
        self.assertEqual(r.stdout, "out\n")
        self.assertEqual(r.stderr, "err\n")
        self.assertTrue(r.ok)
        self.assertEqual(r.status.exit_code, 0)
        self.assertEqual(r.status.profile, "agent")
        self.assertEqual(r.status["version"], 1)
        self.assertIn("--no-tty", r.argv)

    def test_str_runs_in_bash_and_sequence_as_argv(self) -> None:
        r = run("echo $((6*7)) | tr 4 X", profile="agent", workspace=self.ws)
        self.assertEqual(r.stdout, "X2\n")
        # argv: no shell, so $ and quotes reach the command as they are.
        r = run(["printf", "%s|", "a b", "$HOME", "'q'"], profile="agent", workspace=self.ws)
        self.assertEqual(r.stdout, "a b|$HOME|'q'|")

    def test_workspace_is_read_write_and_env_is_set(self) -> None:
        r = run('echo "$GREETING" > note; cat /workspace/note', profile="agent",
                workspace=self.ws, env={"GREETING": "hello there"})
        self.assertEqual(r.stdout, "hello there\n")
        with open(f"{self.ws}/note") as f:
            self.assertEqual(f.read(), "hello there\n")

    def test_bytes_kept_and_text_decoded(self) -> None:
        r = run(r"printf 'ok\377\n'", profile="agent", workspace=self.ws)
        self.assertEqual(r.stdout_bytes, b"ok\xff\n")
        self.assertEqual(r.stdout, "ok\ufffd\n")

    def test_large_output_does_not_deadlock(self) -> None:
        # More than any pipe buffer on each stream while the record waits.
        r = run("head -c 3000000 /dev/zero; head -c 2000000 /dev/zero >&2", profile="agent",
                workspace=self.ws, limits=Limits(max_output="4M"), timeout=60)
        self.assertEqual((len(r.stdout_bytes), len(r.stderr_bytes)), (3000000, 2000000))
        self.assertFalse(r.status.output_truncated)

    def test_stdin(self) -> None:
        r = run("tr a-z A-Z", profile="agent", workspace=self.ws, stdin="hello\n")
        self.assertEqual(r.stdout, "HELLO\n")
        big = b"x" * 3_000_000
        r = run(["wc", "-c"], profile="agent", workspace=self.ws, stdin=big, timeout=60)
        self.assertEqual(r.stdout.strip(), "3000000")

    def test_no_stdin_is_dev_null(self) -> None:
        # Without stdin= a reading command gets EOF at once, never the caller's stdin.
        r = run("cat; echo done", profile="agent", workspace=self.ws, timeout=20)
        self.assertEqual(r.stdout, "done\n")


if __name__ == "__main__":
    unittest.main()
