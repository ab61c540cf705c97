"""Sessions: a workspace kept across runs, listed and removed; made from a
git repository, diffed and exported when the binary has `sessions create`."""

from __future__ import annotations

import os
import subprocess
import tempfile
import unittest

import support
from jail_sandbox import JailError, run, sessions

CREATE = sessions.create_supported()
NO_CREATE = "this jail has no `jail sessions create` (issue 17's git sessions): create/diff/export untested"


class SessionTest(unittest.TestCase):
    def test_persists_across_runs_and_is_listed_and_removed(self) -> None:
        sid = support.session_id()
        r = run("echo 42 > kept; pwd", profile="agent", session=sid)
        self.assertEqual((r.exit_code, r.stdout), (0, "/workspace\n"))
        r = run("cat kept", profile="agent", session=sid)
        self.assertEqual(r.stdout, "42\n")
        listed = {s.id: s for s in sessions.list()}
        self.assertIn(sid, listed)
        self.assertFalse(listed[sid].in_use)
        self.assertIsNotNone(listed[sid].last_use)
        sessions.rm(sid)
        self.assertNotIn(sid, [s.id for s in sessions.list()])
        r = run("cat kept", profile="agent", session=sid)  # a new, empty session
        self.assertNotEqual(r.exit_code, 0)
        sessions.rm(sid)

    def test_rm_unknown_session_raises(self) -> None:
        with self.assertRaises(JailError) as cm:
            sessions.rm("no-such-session")
        self.assertIn("no-such-session", cm.exception.message)

    def test_gc_keeps_recent_sessions(self) -> None:
        sid = support.session_id()
        run("true", profile="agent", session=sid)
        self.assertNotIn(sid, sessions.gc(3600))
        self.assertIn(sid, [s.id for s in sessions.list()])
        self.assertIn(sid, sessions.gc(0.001))
        self.assertNotIn(sid, [s.id for s in sessions.list()])

    @unittest.skipUnless(CREATE, NO_CREATE)
    def test_create_empty(self) -> None:
        sid = support.session_id()
        sessions.create(sid)
        s = {s.id: s for s in sessions.list()}[sid]
        self.assertEqual((s.repository, s.branch, s.base), ("", "", ""))
        self.assertEqual(run("ls -A", profile="agent", session=sid).stdout, "")
        sessions.rm(sid)

    @unittest.skipUnless(CREATE, NO_CREATE)
    def test_git_session_diff_and_export(self) -> None:
        repo = _repo()
        sid = support.session_id()
        sessions.create(sid, git=repo)
        s = {s.id: s for s in sessions.list()}[sid]
        self.assertEqual(s.branch, f"jail/{sid}")
        self.assertEqual(s.base, _git(repo, "rev-parse", "HEAD"))
        who = {"GIT_AUTHOR_NAME": "agent", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "agent",
               "GIT_COMMITTER_EMAIL": "a@x"}
        r = run("cat file && echo changed >> file && git commit -qam change && git log --oneline | wc -l",
                profile="agent", session=sid, env=who)
        self.assertEqual((r.exit_code, r.stdout), (0, "base\n2\n"), r.stderr)
        self.assertIn("+changed", sessions.diff(sid))
        refs_before = _git(repo, "for-each-ref", "--format=%(refname)")
        out = sessions.export(sid)
        self.assertIn(f"jail/{sid}", out)
        self.assertEqual(_git(repo, "log", "-1", "--format=%s", f"jail/{sid}"), "change")
        refs_after = _git(repo, "for-each-ref", "--format=%(refname)")
        self.assertEqual(set(refs_after.split()) - set(refs_before.split()), {f"refs/heads/jail/{sid}"})
        sessions.rm(sid)

    @unittest.skipUnless(CREATE, NO_CREATE)
    def test_create_refuses_a_non_repository(self) -> None:
        with self.assertRaises(JailError) as cm:
            sessions.create(support.session_id(), git=tempfile.mkdtemp())
        self.assertEqual(cm.exception.exit_code, 125)
        self.assertTrue(cm.exception.message.startswith("jail: "))


def _repo() -> str:
    d = tempfile.mkdtemp(prefix="repo.")
    _git(d, "init", "-q", "-b", "main")
    with open(os.path.join(d, "file"), "w") as f:
        f.write("base\n")
    _git(d, "add", "file")
    _git(d, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "base")
    return d


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    unittest.main()
