#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what the tests need (the wasm
# target, the Python and Node clients), runs the Rust tests (the component served by
# the host against the embedded broker), then the real-client suites against a
# running endpoint. Exit status is non-zero if anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

echo "== toolchain"
rustup target add wasm32-wasip2 >/dev/null 2>&1 || rustup target add wasm32-wasip2

echo "== Python clients (venv at tests/compat/.venv)"
if [ ! -x tests/compat/.venv/bin/python ]; then
  python3 -m venv tests/compat/.venv
fi
tests/compat/.venv/bin/pip install --quiet --disable-pip-version-check -r tests/compat/requirements.txt
export PATH="$ROOT/tests/compat/.venv/bin:$PATH"

echo "== Node clients"
(cd tests/compat/node && npm install --no-audit --no-fund --loglevel=error)

echo "== Rust tests"
cargo test --workspace --no-fail-fast

echo "== real-client suites"
exec scripts/compat.sh
