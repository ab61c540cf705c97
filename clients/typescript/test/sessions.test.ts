// Sessions: a workspace kept across runs, and the `jail sessions` helpers.
// The commands being built alongside this client (list --json, create,
// diff, export) are skipped, saying why, on a binary without them.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

import { JailError, run, sessions } from "jail-sandbox";

import { hostDir, unsupported } from "./helpers.js";

const T = { timeout: 60_000 };
// A skip reason, or false: node --test reads "" as a reason too.
const noList = unsupported("sessions", "list", "--json") || false;
const noCreate = unsupported("sessions", "create", "--help") || false;

describe("sessions", () => {
  it("keeps a session's workspace across runs; rm discards it", T, async () => {
    const opts = { profile: "agent", session: "persist" };
    const w = await run("echo kept > note; ls", opts);
    assert.equal(w.exitCode, 0, w.stderr);
    const r = await run("cat note", opts);
    assert.equal(r.stdout, "kept\n");
    assert.equal((await run("cat note", { profile: "agent", session: "other" })).exitCode, 1);

    await sessions.rm("persist");
    const again = await run("cat note 2>/dev/null; echo rc=$?", opts);
    assert.equal(again.stdout, "rc=1\n", "rm discarded the workspace");
  });

  it("rm of no such session is a JailError naming it", T, async () => {
    const e = await sessions.rm("never-made").then(
      () => assert.fail("rm of a missing session succeeded"),
      (e: unknown) => e,
    );
    assert.ok(e instanceof JailError);
    assert.equal(e.exitCode, 125);
    assert.match(e.message, /^jail: session "never-made": no such session/);
  });

  it("gc keeps a session in recent use and removes it once older than the age", T, async () => {
    await run("true", { profile: "agent", session: "gc-me" });
    await sessions.gc("1h");
    await run("test -d /workspace", { profile: "agent", session: "gc-me" });
    await sessions.rm("gc-me"); // still there: rm succeeds
    await run("true", { profile: "agent", session: "gc-me" });
    await new Promise((r) => setTimeout(r, 50));
    const out = await sessions.gc(0.01);
    assert.match(out, /gc-me/);
    await assert.rejects(sessions.rm("gc-me"), JailError);
  });

  it("list gives each session", T, async () => {
    await run("head -c 5000 /dev/zero > blob", { profile: "agent", session: "listed" });
    const all = await sessions.list();
    const s = all.find((x) => x.id === "listed");
    assert.ok(s, `listed not in ${JSON.stringify(all)}`);
    assert.equal(s.in_use, false);
    assert.ok(s.bytes >= 5000, `bytes ${s.bytes}`);
    assert.ok(!Number.isNaN(Date.parse(s.last_use)), s.last_use);
    assert.equal(s.repository, "");
    if (!noList) {
      assert.equal(typeof s["branch"], "string", "list --json gives the git fields");
    }
    await sessions.rm("listed");
    assert.ok(!(await sessions.list()).some((x) => x.id === "listed"));
  });

  it("create makes an empty session the next run uses", { ...T, skip: noCreate }, async () => {
    await sessions.create("made");
    if (!noList) {
      assert.ok((await sessions.list()).some((x) => x.id === "made"));
    }
    const r = await run("ls -A | wc -l; echo x > f", { profile: "agent", session: "made" });
    assert.equal(r.stdout, "0\n");
    assert.equal((await run("cat f", { profile: "agent", session: "made" })).stdout, "x\n");
    await sessions.rm("made");
  });

  it("a session from git: work on its branch, diff, export that one ref", { ...T, skip: noCreate }, async () => {
    const repo = hostDir();
    const git = (...args: string[]): string =>
      execFileSync("git", ["-C", repo, ...args], { encoding: "utf8" }).trim();
    git("init", "-q", "-b", "main");
    git("config", "user.email", "t@example.com");
    git("config", "user.name", "t");
    writeFileSync(join(repo, "README"), "one\n");
    git("add", "README");
    git("commit", "-q", "-m", "one");
    const base = git("rev-parse", "HEAD");

    await sessions.create("task", { git: repo, branch: "jail/task" });
    if (!noList) {
      const s = (await sessions.list()).find((x) => x.id === "task");
      assert.equal(s?.branch, "jail/task");
      assert.equal(s?.base, base);
    }
    const env = { GIT_AUTHOR_NAME: "a", GIT_AUTHOR_EMAIL: "a@x", GIT_COMMITTER_NAME: "a", GIT_COMMITTER_EMAIL: "a@x" };
    const r = await run("echo two >> README && git commit -qam two && git rev-parse --abbrev-ref HEAD", {
      profile: "agent",
      session: "task",
      env,
    });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.stdout, "jail/task\n");

    const diff = await sessions.diff("task");
    assert.match(diff, /^\+two$/m);
    assert.equal(git("rev-parse", "main"), base, "the repository is untouched before export");

    // main is checked out in the repository: export refuses to move it
    // under its working tree, and says so.
    await assert.rejects(sessions.export("task", { to: "main" }), (e: unknown) => {
      assert.ok(e instanceof JailError);
      assert.equal(e.exitCode, 125);
      assert.match(e.message, /^jail: .*main/);
      return true;
    });
    const refsBefore = git("for-each-ref", "--format=%(refname) %(objectname)");
    const ex = await sessions.export("task", { to: "task-result" });
    const head = git("rev-parse", "refs/heads/task-result");
    assert.notEqual(head, base);
    assert.equal(git("show", "task-result:README"), "one\ntwo");
    assert.equal(git("rev-parse", "main"), base, "main untouched");
    assert.equal(
      git("for-each-ref", "--format=%(refname) %(objectname)"),
      [...refsBefore.split("\n"), `refs/heads/task-result ${head}`].sort().join("\n"),
      "export brought exactly one ref",
    );
    assert.equal(ex.ref, "refs/heads/task-result", ex.output);
    assert.equal(ex.commit, head, ex.output);
    await sessions.rm("task");
  });
});
