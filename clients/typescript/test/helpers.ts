// What every test file shares: the jail under test, a state dir and
// workspaces of its own, and whether the binary has a command.
//
// Importing this module sets JAIL_STATE_DIR to a fresh temp dir for the
// test file's process (node --test runs each file in its own), so the
// sessions of one file never meet another's or the caller's.

import { spawnSync } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

if (!process.env["JAIL_BIN"]) {
  throw new Error("set JAIL_BIN to the jail binary under test (make build puts it at bin/jail)");
}
export const JAIL = process.env["JAIL_BIN"];

const temps: string[] = [];
process.on("exit", () => {
  for (const d of temps) {
    rmSync(d, { recursive: true, force: true });
  }
});

function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  temps.push(d);
  return d;
}

process.env["JAIL_STATE_DIR"] = tempDir("jail-ts-state-");

/** The host uid a root caller's jail runs as (user.host_uid's default). */
export const JAIL_UID = 65534;

export const isRoot = process.getuid?.() === 0;

/**
 * workspace is a fresh directory for --workspace. As root it is given to
 * JAIL_UID: the agent profile refuses a root-owned writable bind (what the
 * jail wrote there would be root's).
 */
export function workspace(): string {
  const d = tempDir("jail-ts-ws-");
  if (isRoot) {
    chownSync(d, JAIL_UID, JAIL_UID);
  }
  return d;
}

/** rootOwnedDir is a fresh directory root keeps (for the refusal test). */
export function rootOwnedDir(): string {
  return tempDir("jail-ts-root-");
}

/** hostDir is a fresh temp dir for the host side (a git repository, say). */
export function hostDir(): string {
  return tempDir("jail-ts-host-");
}

/**
 * unsupported is why the binary under test lacks `jail ARGS...` (it exits
 * non-zero), or "" when it has it: the tests of commands being built in
 * parallel skip, saying so, rather than fail against an older binary.
 */
export function unsupported(...args: string[]): string {
  const r = spawnSync(JAIL, args, { encoding: "utf8" });
  if (r.status === 0) {
    return "";
  }
  const line = (r.stderr || r.stdout || "").trim().split("\n").at(-1) ?? "";
  return `${JAIL} has no \`jail ${args.join(" ")}\` (exit ${r.status}: ${line})`;
}

/** agent is the options of a plain agent run in a fresh workspace. */
export function agent(): { profile: string; workspace: string } {
  return { profile: "agent", workspace: workspace() };
}
