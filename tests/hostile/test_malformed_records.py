"""Hostile job input: JSON files of garbage, read by a job run. A malformed JSON record is an
error record of the frame (issue 20), so what a run keeps of them must be bounded: at most
64 KiB of each record's text, and at most 10,000 records per read, past which the read fails
naming the file; the server is untouched either way. The script makes its own input in its
work folder, as a hostile script would."""
from jobkit import OUTPUT, kit, log_messages  # noqa: F401  (kit is a fixture)

SCRIPT = r'''
import os
from awsglue.context import GlueContext
from pyspark.context import SparkContext

gc = GlueContext(SparkContext.getOrCreate())
os.makedirs("huge", exist_ok=True)
with open("huge/h.json", "w") as f:
    f.write('{"ok": 1}\n')
    for _ in range(3):
        f.write("x" * (1 << 20) + "\n")  # three 1 MiB lines that are not JSON
frame = gc.create_dynamic_frame.from_options("s3", {"paths": [os.path.abspath("huge")]}, "json")
errors = [r["error"] for r in frame.errorsAsDynamicFrame().to_arrow().to_pylist()]
print("kept", frame.count(), len(errors), max(len(e["input"]) for e in errors), flush=True)
os.makedirs("flood", exist_ok=True)
with open("flood/f.json", "w") as f:
    f.write("nope\n" * 10001)
gc.create_dynamic_frame.from_options("s3", {"paths": [os.path.abspath("flood")]}, "json").count()
print("never", flush=True)
'''


def test_malformed_json_records_kept_by_a_run_are_bounded(kit, server, glue):
    run = kit.run(kit.job(SCRIPT), timeout=120)
    out = log_messages(server.client("logs"), OUTPUT, run["Id"])
    assert "kept 1 3 65536" in out, out  # each bad record keeps at most 64 KiB of its text
    assert "never" not in out
    assert run["JobRunState"] == "FAILED"
    assert "more than 10000 malformed JSON records" in run["ErrorMessage"], run["ErrorMessage"]
    assert "flood/f.json" in run["ErrorMessage"]
    assert glue.get_databases()["DatabaseList"] is not None  # the server answers as before
