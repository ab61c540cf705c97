// An agent's session: 50 tool calls one after another, each its own jail.

import assert from "node:assert/strict";
import { it } from "node:test";

import { run } from "jail-sandbox";

import "./helpers.js";

it("50 sequential tool calls in one session", { timeout: 120_000 }, async () => {
  const opts = { profile: "agent", session: "fifty", timeout: 30 };
  const start = Date.now();
  for (let i = 1; i <= 50; i++) {
    const r = await run(`echo ${i} >> calls; wc -l < calls; exit $(( ${i} % 4 ))`, opts);
    assert.equal(r.stdout, `${i}\n`, `call ${i}: ${r.stderr}`);
    assert.equal(r.exitCode, i % 4, `call ${i}`);
    assert.equal(r.status.exit_code, i % 4);
  }
  const ms = (Date.now() - start) / 50;
  console.log(`# 50 calls: ${ms.toFixed(1)} ms a call`);
});
