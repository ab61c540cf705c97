// Denials reach the caller in the status record, not as failures of run().

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { run } from "jail-sandbox";

import { agent } from "./helpers.js";

const T = { timeout: 60_000 };

describe("denials in the status", () => {
  it("network: a host not on the allowlist is in status.network_denied", T, async () => {
    const r = await run("getent hosts refused.invalid; echo rc=$?", { ...agent(), allow: ["example.com"] });
    assert.equal(r.exitCode, 0);
    assert.notEqual(r.stdout, "rc=0\n");
    assert.equal(r.status.network, "allowlist");
    const d = r.status.network_denied?.find((x) => x.host === "refused.invalid");
    assert.ok(d, `no denial of refused.invalid in ${JSON.stringify(r.status.network_denied)}`);
    assert.equal(d.kind, "lookup");
    assert.match(d.reason, /allowlist/);
    assert.match(r.stderr, /refused lookup of refused\.invalid/);
  });

  it("network: none is the agent's default, with an empty denial list", T, async () => {
    const r = await run("true", agent());
    assert.equal(r.status.network, "none");
    assert.deepEqual(r.status.network_denied, []);
  });

  it("seccomp: a refused syscall is in status.denied", T, async () => {
    const r = await run("unshare -U true; echo rc=$?", agent());
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout, "rc=1\n");
    assert.equal(r.status.seccomp, "default");
    const d = r.status.denied?.find((x) => x.syscall === "unshare");
    assert.ok(d, `no unshare in ${JSON.stringify(r.status.denied)}`);
    assert.ok(d.count >= 1);
    assert.equal(d.args.length, 6);
  });
});
