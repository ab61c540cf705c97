#!/usr/bin/env bash
# The Python client's suite, against the real jail binary: JAIL_BIN=PATH bash clients/python/test.sh
# (make test runs it). Debian's python3, standard library only; mypy --strict too when installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${JAIL_BIN:?set JAIL_BIN to the jail binary to test (make build puts it at bin/jail)}"
JAIL_BIN=$(realpath "$JAIL_BIN")
export JAIL_BIN
py=${PYTHON:-python3}
[ -n "${PYTHON:-}" ] || [ ! -x /usr/bin/python3 ] || py=/usr/bin/python3
"$py" -c 'import sys; assert sys.version_info >= (3, 9), sys.version' || { echo "python >= 3.9 needed" >&2; exit 1; }
# The tests keep sessions in a temporary state directory of their own (tests/support.py).
unset JAIL_STATE_DIR
export PYTHONPATH=$here/src PYTHONDONTWRITEBYTECODE=1
if command -v mypy >/dev/null; then
	echo "mypy --strict"
	(cd "$here" && mypy --strict --python-version 3.9 --cache-dir=/dev/null src/jail_sandbox examples tests)
fi
"$py" "$here/tests/run.py"
