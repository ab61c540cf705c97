// Running the jail process: its pipes, its status fd, and killing it by
// PID when it must not run on.

import { spawn } from "node:child_process";
import type { Readable } from "node:stream";

/** How the jail process ended and what it wrote. */
export interface Ended {
  /** Its PID. */
  pid: number;
  /** Its exit status; null when a signal ended it. */
  code: number | null;
  /** The signal that ended it ("SIGKILL"), or null. */
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  /** What it wrote on the status fd ("" with none). */
  record: string;
  /** The client killed it: the guard fired, or the run was aborted. */
  killed: "guard" | "abort" | null;
}

export interface SpawnOptions {
  stdin?: string | Uint8Array | undefined;
  /** Give the child a pipe at fd 3 and read the status record from it. */
  statusFd?: boolean;
  /** Milliseconds after which the client kills jail; none when undefined. */
  guardMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** Milliseconds between the SIGTERM the client sends jail and its SIGKILL. */
export const KILL_AFTER_MS = 2000;

/**
 * After jail exits, how long its pipes may stay open. Nothing of the jail
 * outlives jail, so they close at once; this only keeps a caller from
 * hanging on a pipe some other process inherited.
 */
const DRAIN_MS = 5000;

/**
 * spawnJail runs bin with args and resolves once it has ended and its
 * pipes are drained. It rejects only when bin could not be started.
 */
export function spawnJail(bin: string, args: readonly string[], opts: SpawnOptions = {}): Promise<Ended> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) {
      reject(opts.signal.reason);
      return;
    }
    const child = spawn(bin, args, {
      stdio: [opts.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe", opts.statusFd ? "pipe" : "ignore"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const rec: Buffer[] = [];
    const collect = (stream: Readable | null | undefined, into: Buffer[]): void => {
      stream?.on("data", (b: Buffer) => into.push(b));
      stream?.on("error", () => {}); // a pipe destroyed after the drain timeout
    };
    collect(child.stdout, out);
    collect(child.stderr, err);
    collect(child.stdio[3] as Readable | null | undefined, rec);

    let killed: Ended["killed"] = null;
    let killTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;
    const stop = (why: "guard" | "abort"): void => {
      if (killed !== null || child.exitCode !== null || child.signalCode !== null) {
        return;
      }
      killed = why;
      // jail passes SIGTERM on to the command and ends with it; SIGKILL
      // ends jail outright, and the whole jail dies with it.
      child.kill("SIGTERM");
      killTimer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
    };
    const guard = opts.guardMs === undefined ? undefined : setTimeout(() => stop("guard"), opts.guardMs);
    const onAbort = (): void => stop("abort");
    opts.signal?.addEventListener("abort", onAbort, { once: true });

    let settled = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (settled) {
        return;
      }
      settled = true;
      clearTimeout(guard);
      clearTimeout(killTimer);
      clearTimeout(drainTimer);
      opts.signal?.removeEventListener("abort", onAbort);
      for (const s of child.stdio) {
        s?.destroy();
      }
      resolve({
        pid: child.pid as number,
        code,
        signal,
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err),
        record: Buffer.concat(rec).toString("utf8"),
        killed,
      });
    };

    child.on("error", (e) => {
      if (child.pid === undefined && !settled) {
        settled = true;
        clearTimeout(guard);
        opts.signal?.removeEventListener("abort", onAbort);
        reject(e);
      }
    });
    child.on("exit", (code, signal) => {
      clearTimeout(guard);
      clearTimeout(killTimer);
      drainTimer = setTimeout(() => finish(code, signal), DRAIN_MS);
    });
    child.on("close", (code: number | null, signal: NodeJS.Signals | null) => finish(code, signal));

    if (opts.stdin !== undefined && child.stdin) {
      // A command that never reads its input closes the pipe: EPIPE is
      // what it would have done without jail, not a failure of the run.
      child.stdin.on("error", () => {});
      child.stdin.end(opts.stdin);
    }
  });
}
