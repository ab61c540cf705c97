// jail's own failures reject with a JailError carrying its one line.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { JailError, run } from "jail-sandbox";

import { agent, isRoot, rootOwnedDir, workspace } from "./helpers.js";

const T = { timeout: 60_000 };

async function jailError(p: Promise<unknown>): Promise<JailError> {
  const e = await p.then(
    () => assert.fail("expected a JailError"),
    (e: unknown) => e,
  );
  assert.ok(e instanceof JailError, `not a JailError: ${String(e)}`);
  return e;
}

describe("JailError", () => {
  it("an unknown profile: exit 125, jail's line, the record", T, async () => {
    const e = await jailError(run("echo never", { profile: "no-such-profile", workspace: workspace() }));
    assert.equal(e.exitCode, 125);
    assert.match(e.message, /^jail: load profile: no profile "no-such-profile"/);
    assert.ok(!e.message.includes("\n"), "one line");
    assert.equal(e.status?.exit_code, 125);
    assert.match(e.status?.error ?? "", /no-such-profile/);
    assert.ok(!e.stderr.includes("never"));
  });

  it("a bad limit value, refused by jail", T, async () => {
    const e = await jailError(run("true", { ...agent(), limits: { memory: "lots" } }));
    assert.equal(e.exitCode, 125);
    assert.match(e.message, /^jail: .*memory/);
  });

  it("a flag jail does not know, given through extraArgs", T, async () => {
    const e = await jailError(run("true", { ...agent(), extraArgs: ["--no-such-flag"] }));
    assert.equal(e.exitCode, 125);
    assert.match(e.message, /no-such-flag/);
  });

  it("a root-owned workspace, which the agent profile refuses", { ...T, skip: !isRoot && "needs root" }, async () => {
    const e = await jailError(run("true", { profile: "agent", workspace: rootOwnedDir() }));
    assert.equal(e.exitCode, 125);
    assert.match(e.message, /^jail: /);
  });

  it("a jail binary that is not there", T, async () => {
    const e = await jailError(run("true", { jail: "/nonexistent/jail" }));
    assert.equal(e.exitCode, null);
    assert.match(e.message, /cannot start \/nonexistent\/jail.*ENOENT/);
  });

  it("a binary that writes no record", T, async () => {
    // Not jail at all: whatever ends without a record is not a run.
    const e = await jailError(run("true", { jail: "/bin/true" }));
    assert.equal(e.exitCode, 0);
    assert.match(e.message, /without a status record/);
  });
});
