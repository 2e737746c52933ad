#!/usr/bin/env bash
# `make demo-workflow`: start an OpenGlue server, build a four-job workflow with a scheduled start
# trigger and two conditional triggers, run it on demand, wait for its scheduled run (the next
# whole minute), print graph, statistics and run properties, stop the server.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${OPENGLUE_BIN:-build/openglue}"
DATA_DIR="$(mktemp -d /tmp/openglue-demo.XXXXXX)"
PORT_FILE="$DATA_DIR/port"

"$BIN" serve --port 0 --data-dir "$DATA_DIR" --port-file "$PORT_FILE" >"$DATA_DIR/server.log" 2>&1 &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; rm -rf "$DATA_DIR"' EXIT
for _ in $(seq 1 300); do [ -s "$PORT_FILE" ] && break; sleep 0.05; done
[ -s "$PORT_FILE" ] || { echo "server did not start:"; cat "$DATA_DIR/server.log"; exit 1; }
ENDPOINT="http://127.0.0.1:$(cat "$PORT_FILE")"
echo "== OpenGlue server running at $ENDPOINT (data in $DATA_DIR)"
"${PYTHON:-python3}" examples/workflow_demo.py "$ENDPOINT" "$DATA_DIR" --wait-for-schedule
echo "== Server log (triggers and workflow runs):"
grep -E "trigger|workflow" "$DATA_DIR/server.log" || true
echo "== Demo finished"
