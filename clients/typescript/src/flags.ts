// The run's options, and the jail command line they become.

/** A size: bytes as a number, or jail's spelling ("512M", "1.5G", "unlimited"). */
export type Size = number | string;

/** A duration: seconds as a number, or jail's spelling ("30s", "10m"). */
export type Duration = number | string;

/** Limits of one run; each overrides the profile's (`jail --help`, README "Limits"). */
export interface Limits {
  /** Wall time (--time-limit); 0 for none. */
  time?: Duration | undefined;
  /** Memory of the whole jail (--memory). */
  memory?: Size | undefined;
  /** Processes and threads at once (--pids). */
  pids?: number | string | undefined;
  /** CPU cores (--cpu), e.g. 0.5. */
  cpu?: number | string | undefined;
  /** Cap of each of stdout and stderr (--max-output). */
  maxOutput?: Size | undefined;
  /** Bytes the jail may write to its writable binds (--disk). */
  disk?: Size | undefined;
}

/** The options of run(). Every one is optional; the profile's values stand for those not given. */
export interface RunOptions {
  /** Profile name or path to a .toml file (-p); jail's default is "default". */
  profile?: string | undefined;
  /** Session ID: the session's own workspace at /workspace, kept across calls. */
  session?: string | undefined;
  /** Host directory bound read-write at /workspace. */
  workspace?: string | undefined;
  /** Hosts the jail may reach, "HOST" or "HOST:PORT"; implies the allowlist network. */
  allow?: readonly string[] | undefined;
  limits?: Limits | undefined;
  /** Variables set in the command's environment (--env K=V). */
  env?: Readonly<Record<string, string>> | undefined;
  /**
   * Seconds the run may take. It becomes jail's --time-limit (with
   * limits.time too, the smaller holds), which kills the whole jail and
   * reports status.timed_out with exit 137: a Result. Should jail itself
   * still run GUARD_GRACE_S later, the client kills it by PID (SIGTERM,
   * then SIGKILL) and rejects with a JailTimeout.
   */
  timeout?: number | undefined;
  /** The command's standard input; without it the command reads /dev/null. */
  stdin?: string | Uint8Array | undefined;
  /** The jail binary; default $JAIL_BIN, else `jail` on PATH. */
  jail?: string | undefined;
  /** More jail flags, placed after the client's own (a repeated flag's last value wins). */
  extraArgs?: readonly string[] | undefined;
  /** Cancels the run: jail is killed (SIGTERM, then SIGKILL) and run() rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

/** The fd jail writes the status record to: the fourth entry of the child's stdio. */
export const STATUS_FD = 3;

/**
 * runArgs is jail's argv (without the binary) for cmd under opts. A string
 * runs as `bash -c CMD`; an array is the argv itself. Values go as
 * `--flag=value`, so a value that starts with "-" is never read as a flag.
 */
export function runArgs(cmd: string | readonly string[], opts: RunOptions = {}): string[] {
  const argv = typeof cmd === "string" ? ["bash", "-c", cmd] : [...cmd];
  if (argv.length === 0 || argv[0] === "") {
    throw new TypeError("jail: an empty command: give a string for bash -c, or a non-empty argv");
  }
  const args = ["--no-tty", `--status-json=fd:${STATUS_FD}`];
  const flag = (name: string, value: string | number | undefined): void => {
    if (value === undefined) {
      return;
    }
    const v = String(value);
    if (v === "") {
      // jail refuses an empty value too; saying it here names the option.
      throw new TypeError(`jail: option ${name} is empty`);
    }
    args.push(`--${name}=${v}`);
  };
  flag("profile", opts.profile);
  flag("session", opts.session);
  flag("workspace", opts.workspace);
  // A lone host from plain JavaScript is that host, not its characters.
  const allow: readonly string[] = typeof opts.allow === "string" ? [opts.allow] : (opts.allow ?? []);
  for (const host of allow) {
    flag("allow", host);
  }
  const l = opts.limits ?? {};
  const time = timeLimit(opts);
  flag("time-limit", typeof time === "number" ? seconds(time) : time);
  flag("memory", l.memory);
  flag("pids", l.pids);
  flag("cpu", l.cpu);
  flag("max-output", l.maxOutput);
  flag("disk", l.disk);
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (k === "" || k.includes("=")) {
      throw new TypeError(`jail: environment variable name ${JSON.stringify(k)} is empty or holds "="`);
    }
    args.push(`--env=${k}=${v}`);
  }
  args.push(...(opts.extraArgs ?? []));
  args.push("--", ...argv);
  return args;
}

/** seconds spells a number of seconds as a Go duration jail reads ("1.5s"). */
export function seconds(n: number): string {
  if (!Number.isFinite(n) || n < 0) {
    throw new TypeError(`jail: a duration must be a finite number of seconds >= 0, not ${n}`);
  }
  // Whole milliseconds: Go's duration parser takes decimals, but not
  // exponents ("1e-7s"), which String() would write.
  // Rounded up, so a tiny limit never becomes 0, which is none.
  const ms = Math.ceil(n * 1000);
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/**
 * timeLimit is the run's --time-limit: the smaller of timeout and
 * limits.time (0 is none, so never the smaller), or undefined for neither.
 */
export function timeLimit(opts: RunOptions): Duration | undefined {
  const given = [opts.timeout, opts.limits?.time].filter((t): t is Duration => t !== undefined);
  const key = (t: Duration): number => {
    const s = durationSeconds(t);
    return s === null || s === 0 ? Infinity : s;
  };
  return given.sort((a, b) => key(a) - key(b))[0];
}

const UNITS: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, "µs": 1e-6, ns: 1e-9 };

/**
 * durationSeconds reads a duration: seconds as a number, or a Go duration
 * ("1m30s", "500ms", "0"). It is null for a string it cannot read: jail
 * then says what is wrong with it.
 */
export function durationSeconds(d: Duration): number | null {
  if (typeof d === "number") {
    return d;
  }
  const t = d.trim();
  if (t === "0") {
    return 0;
  }
  const part = /(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s|us|µs|ns)/y;
  let total = 0;
  let at = 0;
  while (at < t.length) {
    part.lastIndex = at;
    const m = part.exec(t);
    if (m === null) {
      return null;
    }
    total += Number(m[1]) * (UNITS[m[2] as string] as number);
    at = part.lastIndex;
  }
  return at === 0 ? null : total;
}
