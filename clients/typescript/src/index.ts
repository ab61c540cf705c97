// jail-sandbox: run each agent tool call in its own jail.
//
//   import { run, sessions, JailError } from "jail-sandbox";
//   const r = await run("pytest -q", { profile: "agent", session: "task-1", timeout: 600 });
//   r.exitCode, r.stdout, r.stderr, r.status.timed_out, r.status.network_denied

export { run, jailBinary, GUARD_GRACE_S, type Result } from "./run.js";
export { runArgs, seconds, durationSeconds, timeLimit, STATUS_FD, type RunOptions, type Limits, type Size, type Duration } from "./flags.js";
export { JailError, JailTimeout, type JailErrorDetails } from "./errors.js";
export {
  sessions,
  type SessionInfo,
  type SessionsOptions,
  type CreateOptions,
  type ExportOptions,
  type Exported,
} from "./sessions.js";
export {
  parseStatus,
  type Status,
  type HostDenial,
  type HostUse,
  type SyscallDenial,
  type LimitsRecord,
  type OutputDropped,
  type OutputClosed,
  type UserNS,
} from "./status.js";
