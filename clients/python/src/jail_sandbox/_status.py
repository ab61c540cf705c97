"""The status record jail writes for each run, typed.

The contract is the Go type ``jail.Status`` (jail/status.go): one JSON
object, fields only ever added, never renamed or retyped. This module types
the fields a client acts on and keeps the whole record in ``raw``, so a
field added after this client was written is still there to read, as
``status["field"]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple


@dataclass(frozen=True)
class HostDenial:
    """Something jail's network refused: a lookup, a connection or a datagram."""

    host: str
    port: int  # 0 for a lookup
    count: int  # how many times it was refused
    reason: str  # "not on the allowlist", ...
    kind: str  # "lookup", "tcp" or "udp"


@dataclass(frozen=True)
class SyscallDenial:
    """A system call the seccomp filter refused (once per syscall)."""

    syscall: str  # its name, "?" when libseccomp has none
    nr: int  # its number on this architecture
    count: int  # calls refused
    args: Tuple[str, ...]  # the first call's six arguments, in hex


# The verdict fields, in the order Status.limit_hit reports them: each names
# a limit that ended or hurt the run.
_VERDICTS = (
    "timed_out",
    "oom_killed",
    "pids_limit_hit",
    "cpu_time_exceeded",
    "file_too_large",
    "disk_limit_hit",
    "disk_reserve_hit",
    "output_truncated",
)


@dataclass(frozen=True)
class Status:
    """One run's status record.

    Typed attributes for the fields a client branches on; every field of
    the record, typed here or not, by subscript (``status["network_denied"]``
    is the raw list of dicts) or ``status.get(key)``.
    """

    version: int
    exit_code: int  # jail's exit status: the command's, 128+N for signal N, 125 jail's own failure
    signal: int  # the signal that ended the command, 0 if it exited
    signal_name: str  # "SIGKILL"; "" when signal is 0
    timed_out: bool  # the time limit killed the jail
    oom_killed: bool
    pids_limit_hit: bool
    cpu_time_exceeded: bool
    file_too_large: bool
    output_truncated: bool  # --max-output dropped some of stdout or stderr
    disk_limit_hit: bool
    disk_reserve_hit: bool
    wall_ms: float  # jail start to the command's end
    setup_ms: float  # jail start to the command's exec
    memory_peak_bytes: Optional[int]  # None when the kernel or the run did not say
    network: str  # "none", "allowlist", "host"; "" when jail never got that far
    network_denied: Tuple[HostDenial, ...]
    denied: Tuple[SyscallDenial, ...]
    plan_cached: bool
    profile: str
    error: str  # jail's own failure (exit 125) or why exec failed (126, 127); "" otherwise
    raw: Mapping[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> "Status":
        """Types a decoded record; a field the record lacks takes its zero value."""
        return cls(
            version=_int(raw, "version"),
            exit_code=_int(raw, "exit_code"),
            signal=_int(raw, "signal"),
            signal_name=_str(raw, "signal_name"),
            timed_out=_bool(raw, "timed_out"),
            oom_killed=_bool(raw, "oom_killed"),
            pids_limit_hit=_bool(raw, "pids_limit_hit"),
            cpu_time_exceeded=_bool(raw, "cpu_time_exceeded"),
            file_too_large=_bool(raw, "file_too_large"),
            output_truncated=_bool(raw, "output_truncated"),
            disk_limit_hit=_bool(raw, "disk_limit_hit"),
            disk_reserve_hit=_bool(raw, "disk_reserve_hit"),
            wall_ms=_float(raw, "wall_ms"),
            setup_ms=_float(raw, "setup_ms"),
            memory_peak_bytes=_opt_int(raw, "memory_peak_bytes"),
            network=_str(raw, "network"),
            network_denied=tuple(
                HostDenial(
                    host=_str(d, "host"),
                    port=_int(d, "port"),
                    count=_int(d, "count"),
                    reason=_str(d, "reason"),
                    kind=_str(d, "kind"),
                )
                for d in _dicts(raw, "network_denied")
            ),
            denied=tuple(
                SyscallDenial(
                    syscall=_str(d, "syscall"),
                    nr=_int(d, "nr"),
                    count=_int(d, "count"),
                    args=tuple(str(a) for a in d.get("args") or ()),
                )
                for d in _dicts(raw, "denied")
            ),
            plan_cached=_bool(raw, "plan_cached"),
            profile=_str(raw, "profile"),
            error=_str(raw, "error"),
            raw=raw,
        )

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    @property
    def limit_hit(self) -> Optional[str]:
        """The first verdict field that is true ("timed_out", "oom_killed", ...), or None."""
        for name in _VERDICTS:
            if getattr(self, name):
                return name
        return None


def _int(d: Mapping[str, Any], key: str) -> int:
    v = d.get(key)
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0


def _opt_int(d: Mapping[str, Any], key: str) -> Optional[int]:
    v = d.get(key)
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _float(d: Mapping[str, Any], key: str) -> float:
    v = d.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def _str(d: Mapping[str, Any], key: str) -> str:
    v = d.get(key)
    return v if isinstance(v, str) else ""


def _bool(d: Mapping[str, Any], key: str) -> bool:
    return d.get(key) is True


def _dicts(d: Mapping[str, Any], key: str) -> List[Dict[str, Any]]:
    v = d.get(key)
    if not isinstance(v, list):
        return []
    return [x for x in v if isinstance(x, dict)]
