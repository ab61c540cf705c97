// The status record jail writes for each run (--status-json), as types.
//
// The record's contract is the Go type jail.Status (jail/status.go): fields
// are only ever added, never renamed or retyped. These interfaces keep the
// record's own snake_case names, so that the record, the README and
// jail/status.go read the same; a field jail adds later is still there,
// through the index signature, until it is named here.

/** A lookup, connection or datagram jail's network refused. */
export interface HostDenial {
  host: string;
  /** 0 for a lookup. */
  port: number;
  /** Requests refused. */
  count: number;
  /** "not on the allowlist", ... */
  reason: string;
  /** "lookup", "tcp" or "udp". */
  kind: string;
}

/** A destination the allowlist let through. */
export interface HostUse {
  host: string;
  port: number;
  connections: number;
  /** From the destination to the jail. */
  bytes_in: number;
  /** From the jail to the destination. */
  bytes_out: number;
}

/** A syscall the seccomp filter refused (or, audited, let through). */
export interface SyscallDenial {
  /** Its name, "?" when libseccomp has none. */
  syscall: string;
  /** Its number on this architecture. */
  nr: number;
  /** Calls refused. */
  count: number;
  /** The first call's six arguments, in hex ("0x10000000"). */
  args: string[];
}

/** What the run was held to, and by what. */
export interface LimitsRecord {
  /** "v1", "v2" or "none". */
  cgroup: string;
  memory?: number;
  pids?: number;
  cpu?: number;
  max_output?: number;
  disk?: number;
  disk_reserve?: string;
  session_disk?: number;
  /** Each limit that holds, and by what ("memory (cgroup v2)"). */
  enforced: string[];
  /** Each limit asked for that does not hold (best-effort). */
  not_enforced: string[];
  why_not?: string;
}

/** Bytes of each stream the --max-output cap dropped. */
export interface OutputDropped {
  stdout: number;
  stderr: number;
  undelivered: number;
}

/** Which of the caller's ends closed while the command wrote to it. */
export interface OutputClosed {
  stdout: boolean;
  stderr: boolean;
}

/** Who the jail is on the host, and how jail built its user namespace. */
export interface UserNS {
  host_uid: number;
  host_gid: number;
  /** "unprivileged" or "root". */
  path: string;
  why: string;
}

/**
 * The status record: one JSON object per run. Fields without `?` are in
 * every record, including the one jail writes when it failed before the
 * command ran (then `exit_code` is 125 and `error` says why). Times are
 * milliseconds, sizes bytes.
 */
export interface Status {
  /** 1. */
  version: number;
  /** jail's exit status: the command's, 128+N for signal N, 125 jail's own failure. */
  exit_code: number;
  /** The signal that ended the command, 0 if it exited. */
  signal: number;
  /** The signal's name ("SIGKILL"); absent when `signal` is 0. */
  signal_name?: string;

  /** The time limit killed the jail (`exit_code` 137). */
  timed_out: boolean;
  oom_killed: boolean;
  pids_limit_hit: boolean;
  cpu_time_exceeded: boolean;
  file_too_large: boolean;
  /** --max-output dropped some of stdout or stderr. */
  output_truncated: boolean;
  disk_limit_hit: boolean;
  disk_reserve_hit: boolean;

  wall_ms: number;
  setup_ms: number;
  cpu_user_ms: number;
  cpu_system_ms: number;

  /** Usage as the run's cgroup counted it: absent without a cgroup, null when the kernel does not tell. */
  oom_kills?: number | null;
  memory_peak_bytes?: number | null;
  pids_peak?: number | null;
  cpu_throttled_periods?: number | null;
  disk_written_bytes?: number;
  session_disk_bytes?: number;

  output_dropped?: OutputDropped;
  output_closed?: OutputClosed;

  /** The names of the variables a secrets file set, each value "***". */
  secrets?: Record<string, string>;
  credentials?: Array<{ env: string; hosts: string[]; header?: string }>;
  credential_ca?: string;
  credential_use?: Array<{ env: string; host: string; requests: number; bytes_up: number; bytes_down: number }>;
  credential_misuse?: Array<{ env: string; host: string; requests: number }>;

  userns?: UserNS;
  session_keyring_inherited?: boolean;
  limits?: LimitsRecord;

  /** "none", "allowlist" or "host". */
  network?: string;
  /** What jail's network refused: present (maybe empty) with network "none" or "allowlist". */
  network_denied?: HostDenial[];
  network_allowed?: HostUse[];
  network_proxy_failed?: boolean;
  network_report_incomplete?: boolean;

  jail_cpu_ms?: number;

  /** The seccomp policy's name, or "none". */
  seccomp?: string;
  seccomp_reported?: boolean | null;
  seccomp_audit?: boolean;
  seccomp_compiled?: boolean;
  /** Every syscall the filter refused, once per syscall. */
  denied?: SyscallDenial[];

  plan_cached: boolean;
  profile: string;
  profile_hash: string;
  /** jail's own failure (exit 125), or why exec failed (126, 127). */
  error?: string;

  /** Fields jail adds later than this client. */
  readonly [field: string]: unknown;
}

/**
 * parseStatus reads the record jail wrote: one JSON object on one line.
 * It returns null for no record (jail ended before writing one) and throws
 * for a record that is not a JSON object with a numeric exit_code.
 */
export function parseStatus(text: string): Status | null {
  const line = text.trim();
  if (line === "") {
    return null;
  }
  const value: unknown = JSON.parse(line);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`status record is not a JSON object: ${line.slice(0, 80)}`);
  }
  if (typeof (value as { exit_code?: unknown }).exit_code !== "number") {
    throw new Error(`status record has no exit_code: ${line.slice(0, 80)}`);
  }
  return value as Status;
}
