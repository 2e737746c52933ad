# Sourced by the demo scripts: starts `$BIN serve` over a fresh temporary data directory, stops it
# and removes the directory on exit, and sets SERVER_PID, DATA_DIR and ENDPOINT. SERVER_ARGS, when
# set, adds flags to `serve`.
DATA_DIR="$(mktemp -d /tmp/openglue-demo.XXXXXX)"
PORT_FILE="$DATA_DIR/port"

"$BIN" serve --port 0 --data-dir "$DATA_DIR" --port-file "$PORT_FILE" ${SERVER_ARGS:-} >"$DATA_DIR/server.log" 2>&1 &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; rm -rf "$DATA_DIR"' EXIT
for _ in $(seq 1 300); do [ -s "$PORT_FILE" ] && break; sleep 0.05; done
[ -s "$PORT_FILE" ] || { echo "server did not start:"; cat "$DATA_DIR/server.log"; exit 1; }
ENDPOINT="http://127.0.0.1:$(cat "$PORT_FILE")"
echo "== OpenGlue server running at $ENDPOINT (data in $DATA_DIR)"
