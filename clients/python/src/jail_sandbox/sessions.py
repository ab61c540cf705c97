"""Sessions: workspaces kept across calls (``run(..., session=ID)``).

Thin wrappers of ``jail sessions ...``: each runs the binary (jail=, else
$JAIL_BIN, else ``jail`` on PATH) in the caller's state directory
($JAIL_STATE_DIR, else jail's default) and raises JailError with jail's
one line when it fails. create/diff/export with git need a jail that has
``jail sessions create`` (``create_supported()`` says).
"""

from __future__ import annotations

import builtins
import json
import re
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Mapping, Optional, Sequence, Union

from ._command import PathLike, find_jail, jail_line
from ._errors import JailError
from ._limits import go_duration


@dataclass(frozen=True)
class Session:
    """One session, as ``jail sessions list --json`` describes it."""

    id: str
    bytes: int  # what its workspace holds
    last_use: Optional[datetime]  # None when jail did not say
    in_use: bool  # a call of it is running
    repository: str  # "" unless made from git: the repository it was cloned from
    branch: str  # its branch in that clone
    base: str  # the commit it branched from
    raw: Mapping[str, Any] = field(repr=False, compare=False)


def create(
    id: str,
    git: Optional[PathLike] = None,
    branch: Optional[str] = None,
    from_ref: Optional[str] = None,
    *,
    jail: Optional[PathLike] = None,
) -> None:
    """Makes session id: empty, or with git=REPO a clone of REPO on its own
    branch (default ``jail/ID``), from from_ref (default REPO's HEAD)."""
    args = ["create", id]
    if git is not None:
        args += ["--git", str(git)]
    if branch is not None:
        args += ["--branch", branch]
    if from_ref is not None:
        args += ["--from", from_ref]
    _sessions(args, jail)


def list(*, jail: Optional[PathLike] = None) -> builtins.list[Session]:
    """Every session of the state directory.

    From ``jail sessions list --json``; a jail older than that flag is
    read from its text lines (id, bytes, last use, "in use"), without the
    git fields.
    """
    try:
        out = _sessions(["list", "--json"], jail)
    except JailError as e:
        if "-json" not in e.message:
            raise
        return [_from_line(line) for line in _sessions(["list"], jail).splitlines() if line.strip()]
    raw = json.loads(out or "[]")
    if not isinstance(raw, builtins.list):
        raise JailError(f"jail: sessions list --json: want a JSON array, got {out[:200]!r}")
    return [_from_dict(d) for d in raw if isinstance(d, dict)]


def rm(id: str, *, jail: Optional[PathLike] = None) -> None:
    """Removes session id and its workspace (jail refuses while a call of it runs)."""
    _sessions(["rm", id], jail)


def gc(older_than: Union[float, timedelta, str], *, jail: Optional[PathLike] = None) -> builtins.list[str]:
    """Removes the sessions unused for longer than older_than (seconds, a
    timedelta, or a duration such as "24h"); returns the ids removed."""
    if isinstance(older_than, timedelta):
        older_than = older_than.total_seconds()
    out = _sessions(["gc", "--older-than", go_duration(older_than)], jail)
    return [line.split(None, 1)[1].strip() for line in out.splitlines() if line.startswith("removed ")]


def diff(id: str, *, jail: Optional[PathLike] = None) -> str:
    """A unified diff of the session's branch against its base."""
    return _sessions(["diff", id], jail)


def export(id: str, to: Optional[str] = None, *, jail: Optional[PathLike] = None) -> str:
    """Fast-forwards the repository's branch ``to`` (default the session's
    branch name) to the session's branch; returns jail's line naming the
    ref and commit."""
    args = ["export", id]
    if to is not None:
        args += ["--to", to]
    return _sessions(args, jail).strip()


def create_supported(*, jail: Optional[PathLike] = None) -> bool:
    """Whether the binary has ``jail sessions create`` (and so diff and export)."""
    try:
        _sessions(["create", "--help"], jail)
    except JailError:
        return False
    return True


def _sessions(args: Sequence[str], jail: Optional[PathLike]) -> str:
    argv = [find_jail(jail), "sessions", *args]
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    except OSError as e:
        raise JailError(f"jail: cannot start {argv[0]}: {e}") from e
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != 0:
        msg = jail_line(err) or f"jail: sessions {' '.join(args)}: exit {p.returncode}"
        raise JailError(msg, exit_code=p.returncode, stdout=out, stderr=err)
    return out


def _from_dict(d: Mapping[str, Any]) -> Session:
    def s(k: str) -> str:
        v = d.get(k)
        return v if isinstance(v, str) else ""

    size = d.get("bytes")
    return Session(
        id=s("id"),
        bytes=int(size) if isinstance(size, (int, float)) else 0,
        last_use=_time(s("last_use")),
        in_use=d.get("in_use") is True,
        repository=s("repository"),
        branch=s("branch"),
        base=s("base"),
        raw=d,
    )


def _from_line(line: str) -> Session:
    # "ID\tBYTES\tRFC3339[  in use]"
    parts = line.split("\t")
    if len(parts) < 3:
        raise JailError(f"jail: sessions list: unexpected line {line!r}")
    last, _, use = parts[2].partition("  ")
    raw = {"id": parts[0], "bytes": int(parts[1]), "last_use": last, "in_use": use.strip() == "in use"}
    return _from_dict(raw)


def _time(s: str) -> Optional[datetime]:
    if not s:
        return None
    # Python before 3.11 reads neither "Z" nor more than 6 fractional digits.
    s = re.sub(r"(\.\d{6})\d+", r"\1", s.replace("Z", "+00:00"))
    try:
        return datetime.fromisoformat(s)
    except ValueError:
        return None
