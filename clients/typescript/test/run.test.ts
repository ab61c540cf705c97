// run(): output, exit statuses, stdin, options, against the real jail.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { run, type Result } from "jail-sandbox";

import { agent } from "./helpers.js";

const T = { timeout: 60_000 };

describe("run", () => {
  it("returns stdout and stderr apart, and exit 0", T, async () => {
    const r: Result = await run("echo out; echo err >&2", agent());
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout, "out\n");
    assert.equal(r.stderr, "err\n");
    assert.equal(r.status.exit_code, 0);
    assert.equal(r.status.version, 1);
    assert.equal(r.status.profile, "agent");
    assert.equal(r.status.timed_out, false);
  });

  it("gives the command's own exit status", T, async () => {
    const r = await run("echo partial; exit 3", agent());
    assert.equal(r.exitCode, 3);
    assert.equal(r.stdout, "partial\n");
    assert.equal(r.status.exit_code, 3);
  });

  it("gives 127 for a command not found, as a Result with the reason", T, async () => {
    const r = await run(["no-such-command-here"], agent());
    assert.equal(r.exitCode, 127);
    assert.match(r.status.error ?? "", /no-such-command-here/);
    const viaShell = await run("no-such-command-here", agent());
    assert.equal(viaShell.exitCode, 127);
    assert.match(viaShell.stderr, /not found/);
  });

  it("gives the death by signal as 128+N", T, async () => {
    const r = await run("kill -TERM $$", agent());
    assert.equal(r.exitCode, 143);
    assert.equal(r.status.signal_name, "SIGTERM");
  });

  it("treats a command's own exit 125 as its status, not jail's failure", T, async () => {
    const r = await run("exit 125", agent());
    assert.equal(r.exitCode, 125);
    assert.equal(r.status.error, undefined);
  });

  it("runs an array as argv, with no shell", T, async () => {
    const r = await run(["printf", "%s|", "a b", "$HOME", "'q'", "-n"], agent());
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout, "a b|$HOME|'q'|-n|");
  });

  it("feeds stdin, text or bytes, and /dev/null without it", T, async () => {
    const text = await run("tr a-z A-Z", { ...agent(), stdin: "hello\nworld\n" });
    assert.equal(text.stdout, "HELLO\nWORLD\n");
    const bytes = await run(["wc", "-c"], { ...agent(), stdin: new Uint8Array(100_000).fill(7) });
    assert.equal(bytes.stdout.trim(), "100000");
    const none = await run("cat; echo done", agent());
    assert.equal(none.stdout, "done\n");
  });

  it("takes a command that never reads its large stdin", T, async () => {
    const r = await run("true", { ...agent(), stdin: "x".repeat(4 << 20) });
    assert.equal(r.exitCode, 0);
  });

  it("sets env, and the workspace is the working directory", T, async () => {
    const r = await run('echo "$GREETING"; pwd; touch made', { ...agent(), env: { GREETING: "hi there =" } });
    assert.equal(r.stdout, "hi there =\n/workspace\n");
  });

  it("reads the record from its own fd, which the command cannot reach", T, async () => {
    const forged = '{"version":1,"exit_code":0,"timed_out":true}';
    const r = await run(`echo '${forged}'; echo '${forged}' >&3; exit 4`, agent());
    assert.equal(r.exitCode, 4);
    assert.equal(r.status.exit_code, 4);
    assert.equal(r.status.timed_out, false);
    assert.match(r.stderr, /3: Bad file descriptor/);
  });

  it("passes limits: a memory, pids and output cap the record shows", T, async () => {
    const r = await run("head -c 10000 /dev/zero", {
      ...agent(),
      limits: { memory: "256M", pids: 32, cpu: 0.5, maxOutput: 1024 },
    });
    assert.equal(r.exitCode, 0);
    // The first 1 KiB, then jail's marker line.
    assert.ok(r.stdout.startsWith("\0".repeat(1024) + "\njail: output truncated: 8976 bytes of stdout dropped"), r.stdout.slice(1024));
    assert.equal(r.status.output_truncated, true);
    assert.equal(r.status.output_dropped?.stdout, 8976);
    assert.equal(r.status.limits?.memory, 256 << 20);
    assert.equal(r.status.limits?.pids, 32);
    assert.equal(r.status.limits?.cpu, 0.5);
    assert.equal(r.status.limits?.max_output, 1024);
  });

  it("runs calls at once, each in its own jail", T, async () => {
    const opts = agent();
    const rs = await Promise.all([1, 2, 3, 4, 5].map((i) => run(`echo ${i} > f${i}; sleep 0.3; cat f${i}`, opts)));
    assert.deepEqual(
      rs.map((r) => r.stdout),
      ["1\n", "2\n", "3\n", "4\n", "5\n"],
    );
  });

  it("refuses an empty command or option before running jail", T, async () => {
    await assert.rejects(run([], agent()), TypeError);
    await assert.rejects(run("true", { ...agent(), session: "" }), TypeError);
    await assert.rejects(run("true", { ...agent(), timeout: 0 }), TypeError);
  });
});
