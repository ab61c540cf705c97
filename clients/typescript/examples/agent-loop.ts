// An agent loop whose bash tool runs each call in its own jail.
//
// The model here is a script (no API key, no framework): it asks for the
// tool calls an agent would, and the loop hands it back what a real model
// would see: the output, the exit status and jail's verdict from the
// status record (a network or syscall denial, a limit that killed the
// command). Swap scriptedModel for your model's API; bashTool stays.
//
//   npm run build && JAIL_BIN=/path/to/jail node build/examples/agent-loop.js

import { pathToFileURL } from "node:url";

import { JailError, type Result, run, sessions } from "jail-sandbox";

/** The tool's input, as a model gives it (Claude's and OpenAI's bash tools take the same). */
export interface BashCall {
  command: string;
  /** Seconds; the tool's default when absent. */
  timeout?: number;
}

/** A model's turn: a tool call, or its final answer. */
export type Turn = { tool: "bash"; input: BashCall } | { final: string };

/** The bash tool's settings: one session per conversation, its own workspace kept across calls. */
export interface BashToolOptions {
  session: string;
  allow?: string[];
}

/**
 * bashTool runs one tool call in a fresh jail of the conversation's
 * session and returns the observation for the model. A failure of jail
 * itself is told to the model too, as a line it can act on (jail's reason),
 * rather than ending the loop.
 */
export async function bashTool(call: BashCall, opts: BashToolOptions): Promise<string> {
  try {
    const r = await run(call.command, {
      profile: "agent",
      session: opts.session,
      allow: opts.allow ?? [],
      timeout: call.timeout ?? 120,
      limits: { memory: "1G", maxOutput: "64K" },
    });
    return observation(r);
  } catch (e) {
    if (e instanceof JailError) {
      return `(the sandbox could not run this: ${e.message})`;
    }
    throw e;
  }
}

/** observation is what the model reads of a run: its output, exit status, and jail's verdict. */
export function observation(r: Result): string {
  const s = r.status;
  const notes: string[] = [];
  if (s.timed_out) notes.push("killed: the time limit ran out");
  if (s.oom_killed) notes.push("killed: out of memory");
  if (s.pids_limit_hit) notes.push("the process limit refused a fork");
  if (s.disk_limit_hit) notes.push("killed: the disk limit");
  if (s.output_truncated) notes.push("output truncated at the output limit");
  for (const d of s.network_denied ?? []) {
    const where = d.port ? `${d.host}:${d.port}` : d.host;
    notes.push(`network: ${d.kind} ${where} refused (${d.reason})`);
  }
  for (const d of s.denied ?? []) {
    notes.push(`syscall ${d.syscall} refused by the sandbox`);
  }
  const parts = [r.stdout, r.stderr].filter((x) => x !== "").map((x) => x.trimEnd());
  parts.push(`(exit ${r.exitCode})`, ...notes.map((n) => `[sandbox] ${n}`));
  return parts.join("\n");
}

/**
 * scriptedModel stands for the model: each call gives the next turn,
 * having "read" the last observation.
 */
export function scriptedModel(): (lastObservation: string | null) => Turn {
  const script: Turn[] = [
    { tool: "bash", input: { command: "echo 'echo $((6 * 7))' > answer.sh && bash answer.sh" } },
    { tool: "bash", input: { command: "test -f results.csv" } },
    { tool: "bash", input: { command: "getent hosts pypi.org || echo 'no network to pypi.org'" } },
    { tool: "bash", input: { command: "unshare -U true" } },
    { tool: "bash", input: { command: "echo building; sleep 60", timeout: 1 } },
    { tool: "bash", input: { command: "cat answer.sh" } },
    { final: "The answer is 42 (see answer.sh); results.csv does not exist and pypi.org is not reachable." },
  ];
  let i = 0;
  return () => script[Math.min(i++, script.length - 1)] as Turn;
}

/** agentLoop runs the model until it answers, printing the transcript. */
export async function agentLoop(
  model: (lastObservation: string | null) => Turn,
  opts: BashToolOptions,
  log: (line: string) => void = console.log,
): Promise<string> {
  let last: string | null = null;
  for (let step = 1; step <= 20; step++) {
    const turn = model(last);
    if ("final" in turn) {
      log(`model: ${turn.final}`);
      return turn.final;
    }
    log(`model: bash ${JSON.stringify(turn.input)}`);
    last = await bashTool(turn.input, opts);
    log(last.replace(/^/gm, "  | "));
  }
  throw new Error("the model did not answer within 20 steps");
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const session = `agent-loop-${process.pid}`;
  try {
    await agentLoop(scriptedModel(), { session, allow: ["example.com"] });
  } finally {
    await sessions.rm(session).catch(() => {});
  }
}
