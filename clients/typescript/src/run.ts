// run: one command in its own jail, its output, exit status and record.

import { JailError, JailTimeout, jailMessage } from "./errors.js";
import { type RunOptions, durationSeconds, runArgs, timeLimit } from "./flags.js";
import { spawnJail } from "./spawn.js";
import { type Status, parseStatus } from "./status.js";

/** How a command ended in its jail. */
export interface Result {
  /** The command's exit status; 128+N if signal N ended it (137 for jail's limit kills); 126/127 not executable/found. */
  exitCode: number;
  stdout: string;
  stderr: string;
  /** The status record: the verdict (timed_out, oom_killed, ...), usage, denials. */
  status: Status;
}

/**
 * Seconds the client waits past `timeout` before it kills jail itself:
 * jail's own time limit kills the jail at `timeout`, so this is room for
 * jail's start and for writing the record, never a second limit.
 */
export const GUARD_GRACE_S = 5;

/** jailBinary is the jail to run: the option, else $JAIL_BIN, else `jail` on PATH. */
export function jailBinary(jail?: string): string {
  return jail ?? (process.env["JAIL_BIN"] || "jail");
}

/**
 * run runs cmd in a fresh jail. A string runs as `bash -c CMD` (a shell
 * command line, as an agent's bash tool gives it); an array runs as that
 * argv, no shell. It resolves with the command's exit status, output and
 * the status record, whatever the command did (a failure, a denial, a
 * limit hit, a timeout are all in the Result), and rejects with a
 * JailError only when jail itself failed.
 *
 * stdout and stderr are decoded as UTF-8; the status record comes from a
 * pipe of its own (fd 3), never from the command's output.
 */
export async function run(cmd: string | readonly string[], opts: RunOptions = {}): Promise<Result> {
  if (opts.timeout !== undefined && !(opts.timeout > 0 && Number.isFinite(opts.timeout))) {
    throw new TypeError(`jail: timeout must be a number of seconds > 0, not ${opts.timeout}`);
  }
  const bin = jailBinary(opts.jail);
  const args = runArgs(cmd, opts);
  const limit = timeLimit(opts);
  const limitS = limit === undefined ? null : durationSeconds(limit);
  // No guard for no limit (0), or a spelling only jail reads.
  const guardMs = limitS ? (limitS + GUARD_GRACE_S) * 1000 : undefined;
  let ended;
  try {
    ended = await spawnJail(bin, args, {
      stdin: opts.stdin,
      statusFd: true,
      guardMs,
      signal: opts.signal,
    });
  } catch (e) {
    if (opts.signal?.aborted && e === opts.signal.reason) {
      throw e;
    }
    throw new JailError(`jail: cannot start ${bin}: ${(e as Error).message} (set JAIL_BIN or the jail option)`, {
      cause: e,
    });
  }
  const stdout = ended.stdout.toString("utf8");
  const stderr = ended.stderr.toString("utf8");
  if (ended.killed === "abort") {
    throw opts.signal?.reason ?? new Error("aborted");
  }
  let status: Status | null;
  try {
    status = parseStatus(ended.record);
  } catch (e) {
    throw new JailError(`jail: unreadable status record: ${(e as Error).message}`, {
      exitCode: ended.code,
      stderr,
      cause: e,
    });
  }
  const details = { exitCode: ended.code, status, stdout, stderr };
  if (ended.killed === "guard") {
    throw new JailTimeout(
      `jail: still running ${GUARD_GRACE_S}s past its time limit (${String(limit)}): the client killed it (pid ${ended.pid})`,
      ended.pid,
      details,
    );
  }
  if (ended.code === null) {
    throw new JailError(`jail: killed by ${ended.signal}`, details);
  }
  // 125 is also a status a command may exit with itself: jail's own
  // failure is the one its record gives a reason for, or that has no record.
  if (status === null || (ended.code === 125 && status.error !== undefined)) {
    const fallback = status === null ? `jail: exited ${ended.code} without a status record` : "jail: failed";
    throw new JailError(jailMessage(status, stderr, fallback), details);
  }
  return { exitCode: ended.code, stdout, stderr, status };
}
