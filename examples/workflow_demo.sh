#!/usr/bin/env bash
# `make demo-workflow`: start an OpenGlue server, build a four-job workflow with a scheduled start
# trigger and two conditional triggers, run it on demand, wait for its scheduled run (the next
# whole minute), print graph, statistics and run properties, stop the server.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${OPENGLUE_BIN:-build/openglue}"
source examples/start_server.sh
"${PYTHON:-python3}" examples/workflow_demo.py "$ENDPOINT" "$DATA_DIR" --wait-for-schedule
echo "== Server log (triggers and workflow runs):"
grep -E "trigger|workflow" "$DATA_DIR/server.log" || true
echo "== Demo finished"
