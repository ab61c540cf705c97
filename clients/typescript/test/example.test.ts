// The agent-loop example runs as documented and shows what it claims:
// output, an exit status, a denial, a limit hit, a kept workspace.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { it } from "node:test";

import "./helpers.js";

it("examples/agent-loop runs its scripted conversation", { timeout: 60_000 }, () => {
  const script = fileURLToPath(new URL("../examples/agent-loop.js", import.meta.url));
  const r = spawnSync(process.execPath, [script], { encoding: "utf8", env: process.env });
  assert.equal(r.status, 0, r.stderr);
  const out = r.stdout;
  assert.match(out, /\| 42\n {2}\| \(exit 0\)/);
  assert.match(out, /\| \(exit 1\)/);
  assert.match(out, /\[sandbox\] network: lookup pypi\.org refused \(not on the allowlist\)/);
  assert.match(out, /\[sandbox\] syscall unshare refused by the sandbox/);
  assert.match(out, /\| building\n(.*\n)*? {2}\| \(exit 137\)\n {2}\| \[sandbox\] killed: the time limit ran out/);
  assert.match(out, /\| echo \$\(\(6 \* 7\)\)/);
  assert.match(out, /^model: The answer is 42/m);
});
