#!/usr/bin/env bash
# The TypeScript client's suite, against the real jail binary ($JAIL_BIN):
# installs the pinned dev dependencies (npm ci, from the registry npm is
# configured with), compiles the client, its tests and its example with
# tsc, and runs the tests with node --test. Root (CI) gets nodejs and npm
# from apt when they are missing.
set -euo pipefail
cd "$(dirname "$0")"

: "${JAIL_BIN:?set JAIL_BIN to the jail binary under test (make build puts it at bin/jail)}"
JAIL_BIN=$(realpath "$JAIL_BIN")
export JAIL_BIN

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	if [ "$(id -u)" != 0 ]; then
		echo "clients/typescript: needs node >= 18 and npm (apt-get install nodejs npm)" >&2
		exit 1
	fi
	echo "installing nodejs npm for the TypeScript client's tests"
	apt-get install -y -qq nodejs npm >/dev/null 2>&1 ||
		{ apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null; }
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
	echo "clients/typescript: node $(node --version) is too old: the client needs node >= 18" >&2
	exit 1
fi

npm ci --no-audit --no-fund --loglevel=error
npm run --silent build
node --test build/test/*.test.js
