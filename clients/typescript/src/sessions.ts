// sessions: the `jail sessions` commands, as promises.
//
// A session is a workspace kept across runs (run(cmd, {session: ID})),
// made on first use or by create(), optionally as a clone of a git
// repository on a branch of its own. Every helper runs the jail binary
// and rejects with a JailError carrying jail's one-line reason.

import { JailError, jailMessage } from "./errors.js";
import { type Duration, seconds } from "./flags.js";
import { jailBinary } from "./run.js";
import { spawnJail } from "./spawn.js";

/** One session, as `jail sessions list --json` gives it. */
export interface SessionInfo {
  id: string;
  /** What its workspace holds. */
  bytes: number;
  /** RFC 3339. */
  last_use: string;
  /** A run of it is going on now. */
  in_use: boolean;
  /** The repository it was made from; "" unless made with git. */
  repository: string;
  /** Its branch; "" unless made with git. */
  branch: string;
  /** The commit its branch started at; "" unless made with git. */
  base: string;
  readonly [field: string]: unknown;
}

/** Options every helper takes. */
export interface SessionsOptions {
  /** The jail binary; default $JAIL_BIN, else `jail` on PATH. */
  jail?: string | undefined;
}

export interface CreateOptions extends SessionsOptions {
  /** A git repository (a working tree): the workspace is a clone of it, sharing its objects read-only. */
  git?: string | undefined;
  /** The session's branch (default jail/ID). */
  branch?: string | undefined;
  /** Where the branch starts (default the repository's HEAD). */
  from?: string | undefined;
}

export interface ExportOptions extends SessionsOptions {
  /** The repository's branch to fast-forward (default the session's branch name). */
  to?: string | undefined;
}

/** What export() did: jail's own words, and the ref and commit read from them. */
export interface Exported {
  output: string;
  /** The ref moved ("refs/heads/..."), when jail named one. */
  ref?: string;
  /** The commit it now points at, when jail named one. */
  commit?: string;
}

/** sessionsCmd runs `jail sessions ARGS...` and resolves with its stdout. */
async function sessionsCmd(args: string[], opts: SessionsOptions): Promise<string> {
  const bin = jailBinary(opts.jail);
  let ended;
  try {
    ended = await spawnJail(bin, ["sessions", ...args]);
  } catch (e) {
    throw new JailError(`jail: cannot start ${bin}: ${(e as Error).message} (set JAIL_BIN or the jail option)`, {
      cause: e,
    });
  }
  const stderr = ended.stderr.toString("utf8");
  if (ended.code !== 0) {
    const how = ended.code === null ? `killed by ${ended.signal}` : `exited ${ended.code}`;
    throw new JailError(jailMessage(null, stderr, `jail sessions ${args[0]}: ${how}`), {
      exitCode: ended.code,
      stderr,
    });
  }
  return ended.stdout.toString("utf8");
}

/** id checks a session ID is given: the CLI would read "" as no argument. */
function id(value: string): string {
  if (value === "" || value.startsWith("-")) {
    throw new TypeError(`jail: session id ${JSON.stringify(value)} is empty or starts with "-"`);
  }
  return value;
}

/** fromLine reads a line of `jail sessions list`: "ID\tBYTES\tLAST_USE[  in use]". */
function fromLine(line: string): SessionInfo {
  const [sid = "", bytes = "0", rest = ""] = line.split("\t");
  const inUse = rest.endsWith("in use");
  return {
    id: sid,
    bytes: Number(bytes),
    last_use: rest.replace(/\s+in use$/, ""),
    in_use: inUse,
    repository: "",
    branch: "",
    base: "",
  };
}

/**
 * flag appends `--NAME VALUE`, as the CLI contract spells it (after the
 * ID). A value that starts with "-" would read as a flag: it is refused
 * (write a path as "./-x").
 */
function flag(args: string[], name: string, value: string | undefined): void {
  if (value === undefined) {
    return;
  }
  if (value === "" || value.startsWith("-")) {
    throw new TypeError(`jail: --${name} value ${JSON.stringify(value)} is empty or starts with "-"`);
  }
  args.push(`--${name}`, value);
}

/** The `jail sessions` commands. */
export const sessions = {
  /**
   * create makes session ID: empty, or with `git` a clone of that
   * repository on its own branch (`branch`, default jail/ID, starting at
   * `from`, default HEAD). The jail sees only the clone, never the
   * repository's .git.
   */
  async create(sessionId: string, opts: CreateOptions = {}): Promise<void> {
    const args = ["create", id(sessionId)];
    flag(args, "git", opts.git);
    flag(args, "branch", opts.branch);
    flag(args, "from", opts.from);
    await sessionsCmd(args, opts);
  },

  /**
   * list is every session of the state dir ($JAIL_STATE_DIR). A jail
   * older than `list --json` is read from its text lines (id, bytes, last
   * use, "in use"), without the git fields.
   */
  async list(opts: SessionsOptions = {}): Promise<SessionInfo[]> {
    let out: string;
    try {
      out = await sessionsCmd(["list", "--json"], opts);
    } catch (e) {
      if (!(e instanceof JailError && e.message.includes("-json"))) {
        throw e;
      }
      return (await sessionsCmd(["list"], opts)).split("\n").filter((l) => l.trim() !== "").map(fromLine);
    }
    let value: unknown;
    try {
      value = JSON.parse(out);
    } catch (e) {
      throw new JailError(`jail sessions list --json: not JSON: ${(e as Error).message}`, { cause: e });
    }
    if (!Array.isArray(value)) {
      throw new JailError("jail sessions list --json: not a JSON array");
    }
    return value as SessionInfo[];
  },

  /** rm removes session ID and its workspace: the rollback. Refused while a run of it goes on. */
  async rm(sessionId: string, opts: SessionsOptions = {}): Promise<void> {
    await sessionsCmd(["rm", id(sessionId)], opts);
  },

  /** gc removes the sessions unused for longer than olderThan (seconds, or "24h"); resolves with jail's report. */
  async gc(olderThan: Duration, opts: SessionsOptions = {}): Promise<string> {
    const age = typeof olderThan === "number" ? seconds(olderThan) : olderThan;
    return sessionsCmd(["gc", `--older-than=${age}`], opts);
  },

  /** diff is the session branch's changes against its base, as a unified diff. */
  async diff(sessionId: string, opts: SessionsOptions = {}): Promise<string> {
    return sessionsCmd(["diff", id(sessionId)], opts);
  },

  /** export fast-forwards the repository's branch (`to`, default the session's) to the session's branch: that one ref only. */
  async export(sessionId: string, opts: ExportOptions = {}): Promise<Exported> {
    const args = ["export", id(sessionId)];
    flag(args, "to", opts.to);
    const output = (await sessionsCmd(args, opts)).trim();
    const ref = /\brefs\/\S+/.exec(output)?.[0];
    const commit = /\b[0-9a-f]{40}(?:[0-9a-f]{24})?\b/.exec(output)?.[0];
    return { output, ...(ref === undefined ? {} : { ref }), ...(commit === undefined ? {} : { commit }) };
  },
};
