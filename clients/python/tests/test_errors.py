"""jail's own failures raise JailError with jail's one line and the record."""

from __future__ import annotations

import os
import unittest

import support
from jail_sandbox import JailError, Limits, run


class JailErrorTest(unittest.TestCase):
    def test_bad_profile(self) -> None:
        with self.assertRaises(JailError) as cm:
            run("true", profile="no-such-profile")
        e = cm.exception
        self.assertTrue(e.message.startswith("jail: "), e.message)
        self.assertIn('no profile "no-such-profile"', e.message)
        self.assertEqual(e.exit_code, 125)
        assert e.status is not None
        self.assertIn("no-such-profile", e.status.error)
        self.assertEqual(str(e), e.message)

    def test_bad_limit(self) -> None:
        with self.assertRaises(JailError) as cm:
            run("true", limits=Limits(memory="lots"))
        self.assertIn("lots", cm.exception.message)

    def test_missing_binary(self) -> None:
        with self.assertRaises(JailError) as cm:
            run("true", jail="/nonexistent/jail")
        self.assertIn("/nonexistent/jail", cm.exception.message)
        self.assertIsNone(cm.exception.status)

    def test_not_jail_no_record(self) -> None:
        # A binary that writes no record is an error, never a silent success.
        with self.assertRaises(JailError) as cm:
            run("true", jail="/bin/true")
        self.assertIn("no status record", cm.exception.message)

    @unittest.skipUnless(os.geteuid() == 0, "a root-owned workspace is refused only when jail runs as root")
    def test_root_owned_workspace(self) -> None:
        ws = support.workspace()
        os.chown(ws, 0, 0)
        with self.assertRaises(JailError) as cm:
            run("true", profile="agent", workspace=ws)
        self.assertIn("root", cm.exception.message)


if __name__ == "__main__":
    unittest.main()
