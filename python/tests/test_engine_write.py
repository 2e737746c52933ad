"""openglue_runtime.engines.embedded._engine's writer functions: write, glue_cast, conform, delete_prefix.

Each test reads the output back with pyarrow and compares values; no server is needed.
"""
import datetime
import decimal
import gzip
import json
import os
import re

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

_engine = pytest.importorskip("openglue_runtime.engines.embedded._engine", reason="build the engine module first (make build)")

NAME = re.compile(r"part-\d{5}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.")


def sales():
    return pa.table({
        "id": pa.array([1, 2, 3, 4], pa.int64()),
        "day": pa.array([datetime.date(2024, 1, 1), datetime.date(2024, 1, 2), datetime.date(2024, 1, 1), None]),
        "amount": pa.array([decimal.Decimal("1.50"), None, decimal.Decimal("3.25"), decimal.Decimal("4.00")],
                           pa.decimal128(10, 2)),
        "name": ["a", "b", "c", "d"],
    })


def test_write_parquet_partitioned_reads_back(tmp_path):
    uris = _engine.write(sales(), str(tmp_path / "out"), "parquet", {}, ["day"], {})
    assert len(uris) == 3
    folders = sorted(os.path.basename(os.path.dirname(u)) for u in uris)
    assert folders == ["day=2024-01-01", "day=2024-01-02", "day=__HIVE_DEFAULT_PARTITION__"]
    for uri in uris:
        assert NAME.match(os.path.basename(uri)) and uri.endswith(".snappy.parquet")
    part = pq.read_table([u for u in uris if "2024-01-01" in u][0])
    assert part.column_names == ["id", "amount", "name"]
    assert part.to_pydict() == {"id": [1, 3], "amount": [decimal.Decimal("1.50"), decimal.Decimal("3.25")],
                                "name": ["a", "c"]}
    whole = ds.dataset(str(tmp_path / "out"), partitioning="hive").to_table().sort_by("id")
    assert whole["id"].to_pylist() == [1, 2, 3, 4]


def test_write_to_embedded_store_and_refuses_escapes(tmp_path):
    (tmp_path / "s3" / "bkt").mkdir(parents=True)
    storage = {"s3_root": str(tmp_path / "s3")}
    uris = _engine.write(sales(), "s3://bkt/out/", "csv", {"compression": "gzip"}, [], storage)
    assert len(uris) == 1 and uris[0].startswith("s3://bkt/out/part-00000-") and uris[0].endswith(".csv.gz")
    text = gzip.decompress((tmp_path / "s3" / uris[0][len("s3://"):]).read_bytes()).decode()
    assert text.splitlines()[0] == '"id","day","amount","name"'
    assert text.splitlines()[1] == '1,2024-01-01,1.50,"a"'
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", tmp_path / "s3" / "bkt" / "link")
    for bad in ("s3://bkt/../x", "s3://bkt//abs", "s3://bkt/link/x"):
        with pytest.raises(_engine.EngineError) as err:
            _engine.write(sales(), bad, "csv", {}, [], storage)
        assert bad in str(err.value)
    assert list((tmp_path / "outside").iterdir()) == []


def test_write_json_and_orc(tmp_path):
    uris = _engine.write(sales(), str(tmp_path / "j"), "json", {}, [], {})
    lines = [json.loads(line) for line in open(uris[0])]
    assert lines[1] == {"id": 2, "day": "2024-01-02", "name": "b"}  # null amount omitted
    assert lines[0]["amount"] == 1.5
    orc_uris = _engine.write(sales(), str(tmp_path / "o"), "orc", {"compression": "zlib"}, ["name"], {})
    assert len(orc_uris) == 4 and all(u.endswith(".zlib.orc") for u in orc_uris)
    import pyarrow.orc as orc
    assert sorted(sum((orc.read_table(u)["id"].to_pylist() for u in orc_uris), [])) == [1, 2, 3, 4]


def test_write_errors_name_the_path(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(_engine.EngineError) as err:
        _engine.write(sales(), str(tmp_path / "file" / "out"), "parquet", {}, [], {})
    assert str(tmp_path / "file" / "out") in str(err.value)
    with pytest.raises(_engine.EngineError, match="avro"):
        _engine.write(sales(), str(tmp_path / "x"), "avro", {}, [], {})
    with pytest.raises(_engine.EngineError, match="missing"):
        _engine.write(sales(), str(tmp_path / "x"), "csv", {}, ["missing"], {})
    assert issubclass(_engine.EngineError, RuntimeError)


def test_write_accepts_a_record_batch_reader_and_rolls_files(tmp_path):
    batches = [pa.record_batch({"k": [i % 3 for i in range(30)], "v": list(range(30))}) for _ in range(4)]
    reader = pa.RecordBatchReader.from_batches(batches[0].schema, iter(batches))
    uris = _engine.write(reader, str(tmp_path / "r"), "parquet", {"maxRecordsPerFile": "20"}, ["k"], {})
    assert len(uris) == 6  # each of 3 partitions: 40 rows in files of 20
    total = sum(pq.read_table(u).num_rows for u in uris)
    assert total == 120


def test_glue_cast_arrays_and_choices():
    out = pa.array(_engine.glue_cast(pa.array(["1", " 2 ", "x", None, "3000000000", "1.9"]), pa.int32()))
    assert out.type == pa.int32() and out.to_pylist() == [1, 2, None, None, None, 1]
    assert pa.array(_engine.glue_cast(pa.array(["2024-02-29", "2023-02-29"]), pa.date32())).to_pylist() == \
        [datetime.date(2024, 2, 29), None]
    ts = pa.array(_engine.glue_cast(pa.array(["2024-01-02T03:04:05.5+01:00"]), pa.timestamp("us")))
    assert ts.to_pylist() == [datetime.datetime(2024, 1, 2, 2, 4, 5, 500000)]
    dec = pa.array(_engine.glue_cast(pa.array(["1.005", "x"]), pa.decimal128(10, 2)))
    assert dec.to_pylist() == [decimal.Decimal("1.01"), None]
    assert pa.array(_engine.glue_cast(pa.array([1.0, 2.5]), pa.string())).to_pylist() == ["1.0", "2.5"]
    choice = pa.UnionArray.from_dense(pa.array([0, 1, 1], pa.int8()), pa.array([0, 0, 1], pa.int32()),
                                      [pa.array([7]), pa.array(["12", "no"])], ["long", "string"])
    assert pa.array(_engine.glue_cast(choice, pa.int64())).to_pylist() == [7, 12, None]


def test_glue_cast_record_batch_and_table_by_schema():
    schema = pa.schema([("b", pa.int64()), ("a", pa.string()), ("c", pa.float64())])
    batch = pa.record_batch({"a": [1, 2], "b": ["3", "x"]})
    out = pa.record_batch(_engine.glue_cast(batch, schema))
    assert out.schema.names == ["b", "a", "c"]
    assert out.to_pydict() == {"b": [3, None], "a": ["1", "2"], "c": [None, None]}
    table = pa.table({"a": [1, 2], "b": ["3", "x"]})
    streamed = pa.RecordBatchReader.from_stream(_engine.glue_cast(table, schema)).read_all()
    assert streamed.to_pydict() == {"b": [3, None], "a": ["1", "2"], "c": [None, None]}


def test_conform_is_a_single_use_stream():
    table = pa.table({"x": ["1", "2"], "drop": [1, 2]})
    stream = _engine.conform(table, pa.schema([("x", pa.int16()), ("y", pa.string())]))
    result = pa.RecordBatchReader.from_stream(stream).read_all()
    assert result.schema == pa.schema([("x", pa.int16()), ("y", pa.string())])
    assert result.to_pydict() == {"x": [1, 2], "y": [None, None]}
    with pytest.raises(_engine.EngineError, match="consumed"):
        pa.RecordBatchReader.from_stream(stream)


def test_delete_prefix_with_exclusions_and_retention(tmp_path):
    (tmp_path / "s3" / "bkt").mkdir(parents=True)
    storage = {"s3_root": str(tmp_path / "s3")}
    uris = _engine.write(sales(), "s3://bkt/p", "parquet", {}, ["day"], storage)
    (tmp_path / "s3" / "bkt" / "p" / "keep.txt").write_text("k")
    import time
    hour_ago_ms = int(time.time() * 1000) - 3_600_000
    assert _engine.delete_prefix("s3://bkt/p", storage, older_than_ms=hour_ago_ms) == []
    deleted = _engine.delete_prefix("s3://bkt/p/", storage, exclusions=["**.txt"])
    assert sorted(deleted) == sorted(uris)
    assert (tmp_path / "s3" / "bkt" / "p" / "keep.txt").exists()
    old = tmp_path / "s3" / "bkt" / "p" / "old.txt"
    old.write_text("o")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    # Glue's JSON-string form of exclusions; only the file modified before the cutoff goes.
    assert _engine.delete_prefix("s3://bkt/p", storage, hour_ago_ms, '["**/keep.*"]') == ["s3://bkt/p/old.txt"]
    assert (tmp_path / "s3" / "bkt" / "p" / "keep.txt").exists()
    assert _engine.delete_prefix("s3://bkt/nothing", storage) == []


def _versitygw():
    import shutil
    import sys
    candidate = os.path.join(os.path.dirname(sys.executable), "versitygw")
    return candidate if os.path.exists(candidate) else shutil.which("versitygw")


@pytest.mark.skipif(_versitygw() is None, reason="versitygw (the S3 server `make deps` installs) is absent")
def test_write_and_delete_through_an_s3_endpoint(tmp_path):
    import socket
    import subprocess
    import time
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (tmp_path / "gw" / "bkt").mkdir(parents=True)
    proc = subprocess.Popen([_versitygw(), "--access", "AKIAWRITERTEST", "--secret", "writer-secret-key",
                             "--port", f"127.0.0.1:{port}", "posix", str(tmp_path / "gw")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 15
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        storage = {"endpoint": f"http://127.0.0.1:{port}", "access_key": "AKIAWRITERTEST",
                   "secret_key": "writer-secret-key", "region": "us-east-1"}
        uris = _engine.write(sales(), "s3://bkt/out/", "parquet", {}, ["day"], storage)
        assert len(uris) == 3 and all(u.startswith("s3://bkt/out/day=") for u in uris)
        local = [tmp_path / "gw" / u[len("s3://"):] for u in uris]
        assert sorted(sum((pq.read_table(p)["id"].to_pylist() for p in local), [])) == [1, 2, 3, 4]
        assert sorted(_engine.delete_prefix("s3://bkt/out", storage)) == sorted(uris)
        assert not any(p.exists() for p in local)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
