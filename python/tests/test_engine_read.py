"""openglue_runtime.engines.embedded._engine's reading side, called directly: list_files, scan, Scan.schema/stream/raw_schema.

Values are compared with expected data through pyarrow (the streams cross via the Arrow C stream
interface)."""
import bz2
import gzip
import json
import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from openglue_runtime.engines.embedded import _engine


def read(stream):
    return pa.RecordBatchReader.from_stream(stream).read_all()


def rows(stream):
    return read(stream).to_pylist()


def test_csv_infers_glue_types_and_names_columns_without_header(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("1,x,2.5,\n2,,3,\n3000000000,y,,\n")
    scan = _engine.scan([str(path)], "csv", {}, {})
    schema = pa.schema(scan.schema())
    assert schema == pa.schema([("col0", pa.int64()), ("col1", pa.string()),
                                ("col2", pa.float64()), ("col3", pa.null())])
    assert pa.schema(scan.raw_schema()) == pa.schema([(f"col{i}", pa.string()) for i in range(4)])
    assert rows(scan.stream()) == [
        {"col0": 1, "col1": "x", "col2": 2.5, "col3": None},
        {"col0": 2, "col1": None, "col2": 3.0, "col3": None},
        {"col0": 3000000000, "col1": "y", "col2": None, "col3": None},
    ]


def test_csv_choice_is_a_dense_union_named_by_glue_types(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("id,v\n1,10\n2,ten\n")
    scan = _engine.scan([str(path)], "csv", {"withHeader": "true"}, {})
    v = pa.schema(scan.schema()).field("v").type
    assert v == pa.dense_union([pa.field("int", pa.int32()), pa.field("string", pa.string())])
    assert [r["v"] for r in rows(scan.stream())] == [10, "ten"]


def test_stream_with_schema_conforms_without_inference(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("id;day;amount;extra\n1;2024-03-01;12.5;a\nbad;nope;;b\n")
    scan = _engine.scan([str(path)], "csv", {"withHeader": "true", "separator": ";"}, {})
    target = pa.schema([("id", pa.int64()), ("day", pa.date32()),
                        ("amount", pa.decimal128(10, 2)), ("missing", pa.string())])
    table = read(scan.stream(target, batch_rows=1))
    assert table.schema == target
    import datetime
    import decimal
    assert table.to_pylist() == [
        {"id": 1, "day": datetime.date(2024, 3, 1), "amount": decimal.Decimal("12.50"), "missing": None},
        {"id": None, "day": None, "amount": None, "missing": None},
    ]


def test_json_lines_nested_and_multiline_with_json_path(tmp_path):
    lines = tmp_path / "a.json"
    lines.write_text('{"a": 1, "s": {"x": [1, 2]}}\n{"a": "two", "s": 5}\n')
    scan = _engine.scan([str(lines)], "json", {}, {})
    schema = pa.schema(scan.schema())
    assert schema.field("a").type == pa.dense_union([pa.field("int", pa.int32()),
                                                     pa.field("string", pa.string())])
    s = schema.field("s").type
    assert [f.name for f in s] == ["struct", "int"]
    assert rows(scan.stream()) == [{"a": 1, "s": {"x": [1, 2]}}, {"a": "two", "s": 5}]
    doc = tmp_path / "b.json"
    doc.write_text(json.dumps({"items": [{"k": 1}, {"k": 2.5}], "other": True}, indent=2))
    scan = _engine.scan([str(doc)], "json", {"jsonPath": "$.items[*]", "multiLine": "true"}, {})
    assert pa.schema(scan.schema()) == pa.schema([("k", pa.float64())])
    assert rows(scan.stream()) == [{"k": 1.0}, {"k": 2.5}]


def test_parquet_and_orc_files_with_different_schemas_merge(tmp_path):
    pq.write_table(pa.table({"id": pa.array([1], pa.int32()), "a": ["x"]}), tmp_path / "1.parquet")
    pq.write_table(pa.table({"id": pa.array([2], pa.int64()), "b": [True]}), tmp_path / "2.parquet")
    scan = _engine.scan([str(tmp_path / "1.parquet"), str(tmp_path / "2.parquet")], "glueparquet", {}, {})
    assert pa.schema(scan.schema()) == pa.schema([("id", pa.int64()), ("a", pa.string()), ("b", pa.bool_())])
    assert rows(scan.stream()) == [{"id": 1, "a": "x", "b": None}, {"id": 2, "a": None, "b": True}]
    orc.write_table(pa.table({"n": [1, 2, 3]}), str(tmp_path / "x.orc"))
    assert rows(_engine.scan([str(tmp_path / "x.orc")], "orc", {}, {}).stream()) == [{"n": 1}, {"n": 2}, {"n": 3}]


def test_compressed_inputs(tmp_path):
    (tmp_path / "a.csv.gz").write_bytes(gzip.compress(b"a\n1\n"))
    (tmp_path / "b.csv.bz2").write_bytes(bz2.compress(b"a\n2\n"))
    scan = _engine.scan([str(tmp_path / "a.csv.gz"), str(tmp_path / "b.csv.bz2")], "csv",
                        {"withHeader": "true"}, {})
    assert rows(scan.stream()) == [{"a": 1}, {"a": 2}]


def test_list_files_and_s3_root(tmp_path):
    root = tmp_path / "store"
    (root / "bkt" / "in" / "sub").mkdir(parents=True)
    (root / "bkt" / "in" / "a.csv").write_text("1\n")
    (root / "bkt" / "in" / "sub" / "b.csv").write_text("22\n")
    (root / "bkt" / "in" / "_SUCCESS").write_text("")
    storage = {"s3_root": str(root)}
    listed = _engine.list_files(["s3://bkt/in/"], {}, storage)
    assert [(u, s) for u, s, _ in listed] == [("s3://bkt/in/a.csv", 2), ("s3://bkt/in/sub/b.csv", 3)]
    assert all(m > 0 for _, _, m in listed)
    assert len(_engine.list_files(["s3://bkt/in"], {"recurse": "false"}, storage)) == 1
    assert _engine.list_files(["s3://bkt/in"], {"exclusions": '["**/sub/**"]'}, storage)[0][0] == "s3://bkt/in/a.csv"
    scan = _engine.scan([u for u, _, _ in listed], "csv", {}, storage)
    assert rows(scan.stream()) == [{"col0": 1}, {"col0": 22}]
    with pytest.raises(_engine.EngineError, match=r"s3://bkt/\.\./x"):
        _engine.scan(["s3://bkt/../x"], "csv", {}, storage).schema()


def test_errors_name_the_file(tmp_path):
    missing = str(tmp_path / "missing.csv")
    with pytest.raises(_engine.EngineError, match="missing.csv: no such file"):
        _engine.scan([missing], "csv", {}, {}).schema()
    with pytest.raises(_engine.EngineError, match="no such file or directory"):
        _engine.list_files([missing], {}, {})
    with pytest.raises(_engine.EngineError, match="format avro is not supported by the embedded engine"):
        _engine.scan([missing], "avro", {}, {})
    assert issubclass(_engine.EngineError, RuntimeError)
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1}\n{"a": \n')
    with pytest.raises(_engine.EngineError, match=r"bad.json: invalid JSON: line 2"):
        _engine.scan([str(bad)], "json", {}, {}).schema()
    truncated = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": list(range(1000))}), truncated)
    truncated.write_bytes(truncated.read_bytes()[:300])
    with pytest.raises(_engine.EngineError, match="t.parquet: not a valid Parquet file"):
        _engine.scan([str(truncated)], "parquet", {}, {}).schema()
    # While streaming, the same message arrives through the C stream as pyarrow's ArrowInvalid.
    broken = tmp_path / "broken.csv"
    broken.write_text('a,b\n1,2\n"open,3\n4,5\n')
    with pytest.raises(pa.ArrowInvalid, match="broken.csv: CSV parse error"):
        read(_engine.scan([str(broken)], "csv", {"withHeader": "true"}, {}).stream(pa.schema([("a", pa.string())])))


def test_stream_objects_are_consumed_once_and_accept_arrow_c_schema(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("1\n")
    scan = _engine.scan([str(path)], "csv", {}, {})
    stream = scan.stream(scan.raw_schema())  # an engine schema object is accepted as the target
    assert pa.schema(stream.schema) == pa.schema([("col0", pa.string())])
    assert read(stream).to_pylist() == [{"col0": "1"}]
    with pytest.raises(_engine.EngineError, match="already consumed"):
        stream.__arrow_c_stream__()


@pytest.mark.parametrize("first", ["engine", "pyarrow"])
def test_import_order_with_pyarrow_shares_one_libarrow(first):
    code = (
        "import importlib, sys\n"
        f"order = ['openglue_runtime.engines.embedded._engine', 'pyarrow'] if '{first}' == 'engine' else ['pyarrow', 'openglue_runtime.engines.embedded._engine']\n"
        "mods = [importlib.import_module(m) for m in order]\n"
        "import pyarrow as pa\nfrom openglue_runtime.engines.embedded import _engine\n"
        "open(sys.argv[1], 'w').write('x\\n5\\n')\n"
        "t = pa.RecordBatchReader.from_stream(_engine.scan([sys.argv[1]], 'csv', {'withHeader': 'true'}, {}).stream()).read_all()\n"
        "assert t.to_pylist() == [{'x': 5}], t\n"
        "libs = [l.split()[-1] for l in open('/proc/self/maps') if 'libarrow.so' in l]\n"
        "assert len(set(libs)) == 1, set(libs)\n"
        "print('ok')\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), ".."))
    out = subprocess.run([sys.executable, "-c", code, "/tmp/og_engine_import_%d.csv" % os.getpid()],
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_bounded_memory_csv_streams_through_schema_and_stream(tmp_path):
    """A 300 MB CSV goes through schema() and stream() with a peak RSS well below its size."""
    path = tmp_path / "big.csv"
    block = "".join(f"{i},{i * 7 % 1000}.25,name-{i % 977},2024-01-{i % 28 + 1:02d}\n"
                    for i in range(20000)).encode()
    with open(path, "wb") as out:
        out.write(b"id,price,name,day\n")
        while out.tell() < 300_000_000:
            out.write(block)
    code = (
        "import resource, sys\nimport pyarrow as pa\nfrom openglue_runtime.engines.embedded import _engine\n"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024\n"
        "scan = _engine.scan([sys.argv[1]], 'csv', {'withHeader': 'true'}, {})\n"
        "schema = pa.schema(scan.schema())\n"
        "assert str(schema.field('price').type) == 'double', schema\n"
        "n = sum(b.num_rows for b in pa.RecordBatchReader.from_stream(scan.stream()))\n"
        "print(n, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024 - base)\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), ".."))
    out = subprocess.run([sys.executable, "-c", code, str(path)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows, peak_mib = map(int, out.stdout.split())
    lines = (path.stat().st_size - len("id,price,name,day\n")) // len(block) * 20000
    assert rows == lines
    # Above the interpreter and pyarrow: batches in flight, not the file (286 MiB).
    assert peak_mib < 200, f"peak RSS grew by {peak_mib} MiB for a 300 MB CSV"
