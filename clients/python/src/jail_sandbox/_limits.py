"""Limits: the run flags that bound what one jail may use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Union

# A size is bytes (int) or jail's spelling ("512M", "1.5G", "unlimited").
Size = Union[int, str]


@dataclass(frozen=True)
class Limits:
    """What one run may use, passed as jail's flags; None keeps the profile's.

    time: seconds (float) or a duration ("30s", "10m"): --time-limit.
    memory, max_output, disk: bytes (int) or a size ("512M", "unlimited").
    pids: processes and threads at once (int or "unlimited").
    cpu: cores (0.5, 2, or "unlimited").
    """

    time: Optional[Union[float, str]] = None
    memory: Optional[Size] = None
    pids: Optional[Union[int, str]] = None
    cpu: Optional[Union[float, str]] = None
    max_output: Optional[Size] = None
    disk: Optional[Size] = None

    def to_args(self) -> List[str]:
        """The flags, without --time-limit (run() merges it with timeout=)."""
        args: List[str] = []
        for flag, value in (
            ("--memory", self.memory),
            ("--pids", self.pids),
            ("--cpu", self.cpu),
            ("--max-output", self.max_output),
            ("--disk", self.disk),
        ):
            if value is not None:
                args += [flag, _number(value)]
        return args


def _number(v: Union[int, float, str]) -> str:
    if isinstance(v, bool):
        raise TypeError(f"limit {v!r}: want a number or a string")
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def go_duration(seconds: Union[float, str]) -> str:
    """seconds as a Go duration jail parses ("1500ms"); a string is passed as is."""
    if isinstance(seconds, str):
        return seconds
    if isinstance(seconds, bool) or seconds < 0:
        raise ValueError(f"duration {seconds!r}: want seconds >= 0")
    ms = round(seconds * 1000)
    if ms % 1000 == 0:
        return f"{ms // 1000}s"
    return f"{ms}ms"


def duration_seconds(d: Union[float, str]) -> Optional[float]:
    """A duration in seconds; None for a Go duration this client cannot read."""
    if not isinstance(d, str):
        return float(d)
    units = (("ms", 0.001), ("us", 1e-6), ("µs", 1e-6), ("ns", 1e-9), ("h", 3600.0), ("m", 60.0), ("s", 1.0))
    total, rest = 0.0, d.strip()
    if rest in ("0", ""):
        return 0.0
    while rest:
        i = 0
        while i < len(rest) and (rest[i].isdigit() or rest[i] == "."):
            i += 1
        if i == 0:
            return None
        num = float(rest[:i])
        rest = rest[i:]
        for unit, scale in units:
            if rest.startswith(unit):
                total += num * scale
                rest = rest[len(unit):]
                break
        else:
            return None
    return total
