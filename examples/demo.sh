#!/usr/bin/env bash
# `make demo`: start an OpenGlue server, run a real catalog pipeline against it with boto3 and
# the AWS CLI, a Python shell job, a Glue ETL job (CSV in the catalog -> partitioned Parquet), a
# crawler and a bookmarked job run incrementally (paused, reset), print what happened, stop the
# server.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${OPENGLUE_BIN:-build/openglue}"
# The catalog is also served as a Hive Metastore (docs/metastore.md), on a free port.
HMS_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
SERVER_ARGS="--hms-port $HMS_PORT"
source examples/start_server.sh

export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1
echo "Note: this server accepts the default key test/test, which anyone may use to read and delete"
echo "everything; fine on 127.0.0.1, where it listens. A server on any other address refuses to start"
echo "with it: set access_key_id and secret_access_key first (docs/security.md)."
echo
python3 examples/catalog_demo.py "$ENDPOINT"
echo
python3 examples/hms_demo.py "$HMS_PORT"
echo
python3 examples/job_demo.py "$ENDPOINT" "$DATA_DIR"
echo
python3 examples/etl_demo.py "$ENDPOINT" "$DATA_DIR"
echo
python3 examples/bookmark_demo.py "$ENDPOINT" "$DATA_DIR" "$BIN"

echo
echo "== The AWS CLI against the same server"
echo "\$ aws glue get-databases --endpoint-url $ENDPOINT --query 'DatabaseList[].Name'"
aws glue get-databases --endpoint-url "$ENDPOINT" --query 'DatabaseList[].Name' --output text
echo "\$ aws glue get-partitions --database-name sales --table-name orders --expression \"year='2024' AND month IN ('01','02')\" ..."
aws glue get-partitions --endpoint-url "$ENDPOINT" --database-name sales --table-name orders \
  --expression "year='2024' AND month IN ('01','02')" --query 'Partitions[].Values' --output text

echo
echo "== Stopping the server"
kill "$SERVER_PID"; wait "$SERVER_PID" || true
echo "== Server log:"
cat "$DATA_DIR/server.log"
echo "== Demo finished"
