"""What jail refused and which limit hit, as the status record says them."""

from __future__ import annotations

import unittest

import support
from jail_sandbox import Limits, run


class DenialTest(unittest.TestCase):
    def test_network_refusal_outside_the_allowlist(self) -> None:
        # Only example.com is allowed: the lookup of another name is refused
        # by jail's resolver (nothing leaves the host) and listed.
        r = run("exec 4<>/dev/tcp/blocked.invalid/80", profile="default", allow=["example.com"])
        self.assertNotEqual(r.exit_code, 0)
        self.assertEqual(r.status.network, "allowlist")
        hosts = [(d.host, d.kind) for d in r.status.network_denied]
        self.assertIn(("blocked.invalid", "lookup"), hosts)
        self.assertEqual(r.status["network_denied"][0]["reason"], r.status.network_denied[0].reason)
        self.assertIn("not on the allowlist", r.status.network_denied[0].reason)

    def test_seccomp_denial(self) -> None:
        r = run(["unshare", "-U", "true"], profile="default")
        self.assertNotEqual(r.exit_code, 0)
        self.assertIn("unshare", [d.syscall for d in r.status.denied])
        self.assertEqual(r.status["denied"][0]["syscall"], r.status.denied[0].syscall)

    def test_output_cap(self) -> None:
        ws = support.workspace()
        r = run("head -c 5000 /dev/zero | tr '\\0' x", profile="agent", workspace=ws,
                limits=Limits(max_output=1000))
        self.assertTrue(r.status.output_truncated)
        self.assertEqual(r.status.limit_hit, "output_truncated")
        self.assertLess(len(r.stdout_bytes), 2000)

    def test_pids_limit(self) -> None:
        ws = support.workspace()
        r = run("for i in $(seq 30); do sleep 5 & done; wait", profile="agent", workspace=ws,
                limits=Limits(pids=8), timeout=30)
        self.assertTrue(r.status.pids_limit_hit)
        self.assertEqual(r.status["limits"]["pids"], 8)


if __name__ == "__main__":
    unittest.main()
