// The command line run() gives jail, checked without running it.

import assert from "node:assert/strict";
import { it } from "node:test";

import { durationSeconds, runArgs, seconds, timeLimit } from "jail-sandbox";

it("maps every option to its flag, always --no-tty and the status fd", () => {
  assert.deepEqual(
    runArgs("ls -l", {
      profile: "agent",
      session: "s1",
      workspace: "/w",
      allow: ["pypi.org", "github.com:22"],
      limits: { time: "10m", memory: 512 << 20, pids: 64, cpu: 0.5, maxOutput: "1M", disk: "4G" },
      env: { A: "1 2", B: "x=y" },
      timeout: 30,
      extraArgs: ["--network", "allowlist"],
    }),
    [
      "--no-tty",
      "--status-json=fd:3",
      "--profile=agent",
      "--session=s1",
      "--workspace=/w",
      "--allow=pypi.org",
      "--allow=github.com:22",
      "--time-limit=30s",
      "--memory=536870912",
      "--pids=64",
      "--cpu=0.5",
      "--max-output=1M",
      "--disk=4G",
      "--env=A=1 2",
      "--env=B=x=y",
      "--network",
      "allowlist",
      "--",
      "bash",
      "-c",
      "ls -l",
    ],
  );
});

it("timeout is the time limit when limits.time is not given", () => {
  assert.deepEqual(runArgs(["true"], { timeout: 1.5 }), ["--no-tty", "--status-json=fd:3", "--time-limit=1500ms", "--", "true"]);
  assert.equal(seconds(0.0001), "1ms");
  assert.equal(seconds(120), "120s");
});

it("reads Go durations, and takes the smaller limit", () => {
  assert.equal(durationSeconds("1m30s"), 90);
  assert.equal(durationSeconds("1.5h"), 5400);
  assert.equal(durationSeconds("250ms"), 0.25);
  assert.equal(durationSeconds("0"), 0);
  assert.equal(durationSeconds("soon"), null);
  assert.equal(durationSeconds("10"), null);
  assert.equal(timeLimit({ timeout: 30, limits: { time: "10s" } }), "10s");
  assert.equal(timeLimit({ timeout: 5, limits: { time: "10m" } }), 5);
  assert.equal(timeLimit({ timeout: 5, limits: { time: 0 } }), 5);
  assert.equal(timeLimit({}), undefined);
});

it("takes undefined for any option, and a lone allow string as one host", () => {
  assert.deepEqual(runArgs("x", { profile: undefined, timeout: undefined, limits: { memory: undefined } }), runArgs("x"));
  const loose = { allow: "pypi.org" } as unknown as { allow: string[] };
  assert.ok(runArgs("x", loose).includes("--allow=pypi.org"));
});

it("an argv starting with - stays the command, after --", () => {
  assert.deepEqual(runArgs(["-x", "--help"]).slice(-3), ["--", "-x", "--help"]);
});

it("refuses what jail would misread", () => {
  assert.throws(() => runArgs([]), TypeError);
  assert.throws(() => runArgs("true", { profile: "" }), TypeError);
  assert.throws(() => runArgs("true", { env: { "A=B": "c" } }), TypeError);
  assert.throws(() => runArgs("true", { limits: { time: -1 } }), TypeError);
});
