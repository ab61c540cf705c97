// Time: jail's time limit, the client's guard that kills jail by PID, and
// cancelling a run.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { GUARD_GRACE_S, JailError, JailTimeout, run } from "jail-sandbox";

import { agent } from "./helpers.js";

const T = { timeout: 60_000 };

describe("timeouts", () => {
  it("limits.time kills the whole jail: exit 137, status.timed_out", T, async () => {
    const start = Date.now();
    const r = await run("echo started; sleep 30 & sleep 30", { ...agent(), limits: { time: 1 } });
    assert.ok(Date.now() - start < 10_000, "the time limit ended the run");
    assert.equal(r.exitCode, 137);
    assert.equal(r.stdout, "started\n");
    assert.equal(r.status.timed_out, true);
    assert.equal(r.status.signal_name, "SIGKILL");
    assert.match(r.stderr, /jail: killed: time limit/);
  });

  it("timeout is jail's time limit, as a Result", T, async () => {
    const start = Date.now();
    const r = await run(["sleep", "30"], { ...agent(), timeout: 0.5 });
    assert.ok(Date.now() - start < 10_000);
    assert.equal(r.exitCode, 137);
    assert.equal(r.status.timed_out, true);
  });

  it("the smaller of timeout and limits.time holds", T, async () => {
    const start = Date.now();
    const r = await run(["sleep", "30"], { ...agent(), timeout: 20, limits: { time: "500ms" } });
    assert.ok(Date.now() - start < 10_000);
    assert.equal(r.status.timed_out, true);
  });

  it("a run within its timeout is untouched", T, async () => {
    const r = await run("sleep 0.2; echo ok", { ...agent(), timeout: 20 });
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout, "ok\n");
    assert.equal(r.status.timed_out, false);
  });

  it("kills jail by PID when it outlives timeout: a JailTimeout", T, async () => {
    // The last --time-limit wins: jail is told no limit, so only the
    // client's guard can end it.
    const start = Date.now();
    const err = await run("trap '' TERM; sleep 60", { ...agent(), timeout: 1, extraArgs: ["--time-limit=0"] }).then(
      () => assert.fail("the run should have been killed"),
      (e: unknown) => e,
    );
    const took = (Date.now() - start) / 1000;
    assert.ok(err instanceof JailTimeout, String(err));
    assert.ok(err instanceof JailError);
    assert.ok(err.pid > 0);
    assert.match(err.message, /past its time limit \(1\): the client killed it/);
    assert.ok(took >= 1 + GUARD_GRACE_S - 0.5, `killed after ${took}s, before the guard`);
    assert.ok(took < 1 + GUARD_GRACE_S + 8, `killed after ${took}s`);
  });

  it("an AbortSignal ends the run at once and rejects with its reason", T, async () => {
    const ac = new AbortController();
    const start = Date.now();
    const p = run("sleep 60", { ...agent(), signal: ac.signal });
    setTimeout(() => ac.abort(), 300);
    await assert.rejects(p, { name: "AbortError" });
    assert.ok(Date.now() - start < 5_000);
    await assert.rejects(run("true", { ...agent(), signal: AbortSignal.abort() }), { name: "AbortError" });
  });
});
