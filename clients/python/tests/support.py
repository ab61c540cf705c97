"""What every test module shares: the binary under test, a private state
directory, and workspaces a jail may write to."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

JAIL_BIN = os.environ.get("JAIL_BIN", "")
if not JAIL_BIN or not os.access(JAIL_BIN, os.X_OK):
    raise SystemExit(f"JAIL_BIN={JAIL_BIN!r}: set it to the jail binary to test (make build: bin/jail)")
JAIL_BIN = os.path.abspath(JAIL_BIN)

# Sessions go to a private state directory, never the host's /var/lib/jail.
_root = tempfile.mkdtemp(prefix="jail-py-test.")
os.environ["JAIL_STATE_DIR"] = os.path.join(_root, "state")
os.mkdir(os.environ["JAIL_STATE_DIR"], 0o700)
atexit.register(shutil.rmtree, _root, ignore_errors=True)

# As root, the agent profile refuses a root-owned workspace (what the jail
# wrote there would be root's); the jail runs as the profile's host_uid.
UNPRIVILEGED = 65534


def workspace() -> str:
    """A fresh directory the jail may write, owned as the agent profile wants."""
    d = tempfile.mkdtemp(prefix="ws.", dir=_root)
    os.chmod(d, 0o755)
    if os.geteuid() == 0:
        os.chown(d, UNPRIVILEGED, UNPRIVILEGED)
    return d


def session_id() -> str:
    return "t-" + uuid.uuid4().hex[:12]
