// JailError: jail itself failed, as distinct from the command failing.

import type { Status } from "./status.js";

/**
 * JailError is jail's own failure: it exited 125 with its one-line reason
 * (a bad profile or flag, a workspace it refuses, a host that cannot give
 * the isolation asked for), it ended without a status record, it could not
 * be started, or the client had to kill it. A command that fails (any exit
 * status of its own, 126 and 127 included) is never a JailError: that is a
 * Result, for the agent to see.
 */
export class JailError extends Error {
  /** jail's exit status; null when it was not started or died by a signal. */
  readonly exitCode: number | null;
  /** The status record, when jail wrote one. */
  readonly status: Status | null;
  /** What the command wrote on stdout, if it ran. */
  readonly stdout: string;
  /** All jail printed on stderr (the command's stderr too, if it ran). */
  readonly stderr: string;

  constructor(message: string, details: JailErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "JailError";
    this.exitCode = details.exitCode ?? null;
    this.status = details.status ?? null;
    this.stdout = details.stdout ?? "";
    this.stderr = details.stderr ?? "";
  }
}

export interface JailErrorDetails {
  exitCode?: number | null;
  status?: Status | null;
  stdout?: string;
  stderr?: string;
  cause?: unknown;
}

/**
 * JailTimeout: the client's guard stopped jail, which ran on past its own
 * time limit and a grace (GUARD_GRACE_S). jail's --time-limit ends a slow
 * command itself, and that is a Result with status.timed_out; this is only
 * for a jail that did not end by then. The client sent jail's PID SIGTERM,
 * then SIGKILL 2 s later: the whole jail dies with jail.
 */
export class JailTimeout extends JailError {
  /** The PID of the jail process the client killed. */
  readonly pid: number;

  constructor(message: string, pid: number, details: JailErrorDetails = {}) {
    super(message, details);
    this.name = "JailTimeout";
    this.pid = pid;
  }
}

/**
 * jailMessage is jail's one-line reason: the record's error when there is
 * one (it is what jail printed, without "jail: "), else the last line jail
 * printed on stderr that starts with "jail: ", else fallback.
 */
export function jailMessage(status: Status | null, stderr: string, fallback: string): string {
  if (status?.error) {
    return `jail: ${status.error}`;
  }
  const lines = stderr.split("\n").filter((l) => l.startsWith("jail: "));
  return lines.at(-1) ?? fallback;
}
