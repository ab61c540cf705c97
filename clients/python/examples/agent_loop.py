#!/usr/bin/env python3
"""An agent loop whose bash tool runs each call in its own jail.

The "model" here is a script of tool calls (no LLM, no framework): swap
ScriptedModel for your model's client. What matters is bash_tool(): one
jail per call, the session's workspace kept between calls, and an
observation that tells the model what jail refused or which limit ended
the command, read from the status record rather than guessed from text.

    JAIL_BIN=bin/jail PYTHONPATH=clients/python/src python3 clients/python/examples/agent_loop.py
"""

from __future__ import annotations

import sys
import uuid
from dataclasses import dataclass
from typing import List, Optional, Sequence, Union

from jail_sandbox import JailError, Limits, Result, run, sessions

# What the agent's jail may reach: its package index, nothing else.
ALLOW = ["pypi.org", "files.pythonhosted.org"]
TOOL_TIMEOUT = 60.0  # seconds, per call: jail's --time-limit
OBSERVATION_CHARS = 400  # of each stream, shown to the model (small here to keep the demo short)


@dataclass
class ToolCall:
    command: str
    timeout: float = TOOL_TIMEOUT


@dataclass
class Final:
    answer: str


Action = Union[ToolCall, Final]


class ScriptedModel:
    """Stands in for an LLM: returns the next action given the observations so far."""

    def __init__(self, script: Sequence[Action]) -> None:
        self.script = list(script)

    def next_action(self, observations: List[str]) -> Action:
        return self.script[len(observations)] if len(observations) < len(self.script) else Final("(out of script)")


def bash_tool(command: str, *, session: str, timeout: float = TOOL_TIMEOUT) -> str:
    """The agent's bash tool: run command in a fresh jail, describe the outcome."""
    try:
        r = run(command, profile="agent", session=session, allow=ALLOW, timeout=timeout,
                limits=Limits(memory="1G", max_output="256K"))
    except JailError as e:
        # jail itself refused (bad flag, a host that cannot sandbox): not
        # the command's fault; the message says how to fix it.
        return f"[tool error] {e.message}"
    return observe(r)


def observe(r: Result) -> str:
    """What the model sees: the output, the exit code, and jail's verdict."""
    parts = []
    if r.stdout:
        parts.append(_clip(r.stdout.rstrip("\n")))
    if r.stderr:
        parts.append("[stderr] " + _clip(r.stderr.rstrip("\n")))
    parts.append(f"[exit {r.exit_code}]")
    st = r.status
    for d in st.network_denied:
        where = d.host if d.kind == "lookup" else f"{d.host}:{d.port}"
        parts.append(f"[jail refused network {d.kind} {where}: {d.reason}; allowed hosts: {', '.join(ALLOW)}]")
    for s in st.denied:
        parts.append(f"[jail refused syscall {s.syscall} ({s.count}x)]")
    limit = _limit_note(r)
    if limit:
        parts.append(limit)
    return "\n".join(parts)


def _clip(text: str, keep: int = OBSERVATION_CHARS) -> str:
    """The head and tail of a long output: what fits in the model's context."""
    if len(text) <= keep:
        return text
    half = keep // 2
    return f"{text[:half]}\n[... {len(text) - keep} characters cut ...]\n{text[-half:]}"


def _limit_note(r: Result) -> Optional[str]:
    st = r.status
    if st.timed_out:
        return f"[killed: time limit, after {st.wall_ms / 1000:.1f} s; split the work or ask for more time]"
    if st.oom_killed:
        return "[killed: out of memory]"
    if st.pids_limit_hit:
        return "[the process limit refused a fork]"
    if st.output_truncated:
        return "[output truncated: write it to a file and read parts of it]"
    if st.limit_hit:
        return f"[limit: {st.limit_hit}]"
    return None


SCRIPT: List[Action] = [
    ToolCall("echo 'print(sum(range(10)))' > sum.py && python3 sum.py"),
    ToolCall("cat sum.py && grep -c missing sum.py"),  # grep finds nothing: exit 1
    ToolCall("python3 -c \"import urllib.request; urllib.request.urlopen('https://example.com', timeout=5)\" "
             "2>&1 | tail -1"),  # not on the allowlist
    ToolCall("unshare -U true"),  # a syscall the seccomp policy refuses
    ToolCall("echo working; sleep 30", timeout=2),  # the time limit ends it
    ToolCall("yes line | head -c 400000"),  # more than max_output
    Final("sum.py prints 45"),
]


def main() -> int:
    session = "agent-" + uuid.uuid4().hex[:8]
    model = ScriptedModel(SCRIPT)
    observations: List[str] = []
    try:
        while True:
            action = model.next_action(observations)
            if isinstance(action, Final):
                print(f"=== final answer: {action.answer}")
                return 0
            print(f"=== tool call {len(observations) + 1}: {action.command}")
            obs = bash_tool(action.command, session=session, timeout=action.timeout)
            print(obs)
            observations.append(obs)
    finally:
        sessions.rm(session)


if __name__ == "__main__":
    sys.exit(main())
