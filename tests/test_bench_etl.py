"""The ETL benchmark's own tools (bench/etl): the generated CSV, the two references, the output
check and run.py's report. No server: run.py is driven with --only pyarrow,duckdb."""
import csv
import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ETL = os.path.join(ROOT, "bench", "etl")
sys.path.insert(0, ETL)
sys.path.insert(0, os.path.dirname(ETL))
import etl_schema  # noqa: E402
import gen_csv  # noqa: E402
import ref_pyarrow  # noqa: E402
import run as etl_run  # noqa: E402


@pytest.fixture()
def small_chunks(monkeypatch):
    monkeypatch.setattr(gen_csv, "CHUNK_ROWS", 500)


def test_generated_csv_is_deterministic_ordered_and_mixed(tmp_path, small_chunks):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    assert gen_csv.generate(str(a), rows=1234, threads=3)[0] == 1234
    gen_csv.generate(str(b), rows=1234, threads=1)
    assert a.read_bytes() == b.read_bytes()
    with open(a, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == [name for name, _ in gen_csv.COLUMNS]
    body = rows[1:]
    assert len(body) == 1234 and all(len(r) == 16 for r in body)
    # Chunks made on several threads are written in order.
    assert [int(r[0]) for r in body] == list(range(5_000_000_000, 5_000_000_000 + 1234))
    col = {name: [r[i] for r in body] for i, (name, _) in enumerate(gen_csv.COLUMNS)}
    assert any("," in v for v in col["customer_name"] + col["city"])      # needed quoting
    assert any('"' in v for v in col["customer_name"] + col["comment"])
    assert sum(v == "" for v in col["comment"]) > 600                         # about 70 % empty
    assert 0 < sum(v == "" for v in col["quantity"]) < 100
    assert set(col["is_priority"]) == {"true", "false"}
    assert all(len(v.split(".")[1]) == 2 for v in col["unit_price"] + col["tax"])
    days = sorted(set(col["order_date"]))
    assert days[0] >= "2024-03-01" and days[-1] <= "2024-03-30" and len(days) == 30
    assert all(ts[:10] == d for ts, d in zip(col["created_at"], col["order_date"]))
    # Every value converts to its target type.
    table = pa.csv.read_csv(a, convert_options=pa.csv.ConvertOptions(
        column_types={f.name: f.type for f in etl_schema.target_schema()}))
    assert table.num_rows == 1234


def test_size_mode_comes_close_to_the_size(tmp_path, small_chunks):
    rows, size = gen_csv.generate(str(tmp_path / "s.csv"), size_bytes=300_000)
    assert abs(size - 300_000) < 3000 and size == os.path.getsize(tmp_path / "s.csv")


def _partition_files(out):
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(out) for f in fs if f.endswith(".parquet"))


def test_references_agree_and_the_check_sees_a_changed_value(tmp_path, small_chunks):
    src = tmp_path / "in.csv"
    gen_csv.generate(str(src), rows=3000)
    runs = [("pyarrow", lambda o: ref_pyarrow.run(str(src), o)),
            ("dataset", lambda o: ref_pyarrow.run(str(src), o, writer="dataset"))]
    try:   # DuckDB comes with bench/requirements.txt (`make bench-deps`), not the test deps
        import ref_duckdb
        runs.append(("duckdb", lambda o: ref_duckdb.run(str(src), o)))
    except ImportError:
        pass
    outs = {}
    for name, fn in runs:
        outs[name] = str(tmp_path / name)
        fn(outs[name])
    results = {}
    for name, out in outs.items():
        parts, types, files = etl_run.checksums(out)
        results[name] = {"checksums": parts, "types": types}
        assert len(parts) == 30 and sum(p["rows"] for p in parts.values()) == 3000
        assert "order_date" not in types                 # the key lives in the folder names
    etl_run.compare(results, "pyarrow")
    assert [results[n]["check"] for n in outs] == ["identical"] * len(outs), \
        {n: r["check_problems"] for n, r in results.items()}

    # One decimal in one partition changed by a cent: the check must say so.
    other = list(outs)[-1]
    victim = _partition_files(outs[other])[3]
    table = pq.read_table(victim)
    prices = table.column("unit_price").to_pylist()
    prices[0] = prices[0] + type(prices[0])("0.01")
    table = table.set_column(table.schema.get_field_index("unit_price"), "unit_price",
                             pa.array(prices, table.schema.field("unit_price").type))
    pq.write_table(table, victim)
    parts, types, _ = etl_run.checksums(outs[other])
    results[other] = {"checksums": parts, "types": types}
    etl_run.compare(results, "pyarrow")
    assert results[other]["check"] == "1 differences"
    assert "unit_price sum (cents)" in results[other]["check_problems"][0]

    # A column of another type is reported too.
    table = table.set_column(table.schema.get_field_index("quantity"), "quantity",
                             pc.cast(table.column("quantity"), pa.int64()))
    pq.write_table(table, victim)
    parts, types, _ = etl_run.checksums(outs[other])
    results[other] = {"checksums": parts, "types": types}
    etl_run.compare(results, "pyarrow")
    assert "column quantity is int32 | int64, not int32" in results[other]["check_problems"]


def test_run_py_reports_the_references_and_openglue_side_by_side(tmp_path):
    try:
        import duckdb  # noqa: F401
        only = "pyarrow,duckdb,openglue"
    except ImportError:
        only = "pyarrow,openglue"
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\nkept\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, os.path.join(ETL, "run.py"), "--rows", "5000",
                        "--only", only, "--cache-dir", str(tmp_path / "cache"),
                        "--write-doc", str(doc)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    text = doc.read_text()
    assert text.startswith("# Benchmarks\n\nkept\n")
    assert etl_run.DOC_BEGIN in text and etl_run.DOC_END in text
    table = [line for line in text.splitlines() if line.startswith("| pyarrow") or line.startswith("| DuckDB")]
    assert len(table) == len(only.split(",")) - 1 and all(line.rstrip().endswith("| identical |") for line in table), table
    # OpenGlue's in-process run is there and wrote the same rows and values as pyarrow.
    ours = [line for line in text.splitlines() if line.startswith("| OpenGlue, in-process")]
    assert len(ours) == 1 and ours[0].rstrip().endswith("| identical |"), ours
    # The cached input is reused on a second run (same bytes, not regenerated).
    cached = [f for f in os.listdir(tmp_path / "cache") if f.endswith(".csv")]
    assert cached == ["orders-v1-5000rows.csv"]


def test_report_with_openglue_rows_has_targets_and_overhead():
    args = etl_run.parse_args(["--no-write-doc", "--repeat", "2"])
    info = {"nproc": 2, "cpu": "x", "memory": "24 GB", "kernel": "6", "python": "3.11"}
    meta = {"rows": 14_000_000, "bytes": 2_000_000_000, "generator_version": 1}

    def res(wall, cpu, rss, **extra):
        return {"exit": 0, "wall_s": wall, "cpu_s": cpu, "peak_rss": rss, "files": 30,
                "out_bytes": 7e8, "check": "identical", "walls_s": [wall, wall + 1], **extra}

    results = {"pyarrow": res(20.0, 30.0, 9e8), "duckdb": res(25.0, 35.0, 3e9),
               "openglue": res(22.0, 33.0, 1.2e9, engine="embedded (no JVM in the process tree)"),
               "openglue-job": res(22.5, 33.5, 1.25e9, execution_time_s=22, server_cpu_s=0.05,
                                   state="SUCCEEDED"),
               "_load_before": 0.5, "_load_after": 0.7}
    text = etl_run.render(args, info, "2026-12-01 03:00", meta, results, {}, "openglue 0.1.0")
    assert "The machine was busy" not in text
    assert ("| OpenGlue, in-process (`python3 etl_job.py`, embedded engine) | 22.0 s | 91 | 33.0 s "
            "| 61 | 1.50 | 1,200 MB |") in text
    assert ("whole process tree" in text and "OpenGlue, in-process (`python3 etl_job.py`, "
            "embedded engine): embedded (no JVM in the process tree)") in text
    assert "Job-run overhead (job run wall − in-process wall): **0.50 s** (2.3 %)" in text
    assert "| throughput ≥ 0.8× the pyarrow reference's | 0.91× (per CPU-second: 0.91×) | **yes** |" in text
    assert "| peak RSS < 1.5 GB (input 2.00 GB) | 1,200 MB | **yes** |" in text
    assert "openglue 22.0, 23.0 s" in text

    results["openglue"].update(wall_s=40.0, peak_rss=1.6e9, check="2 differences",
                               check_problems=["a", "b"])
    text = etl_run.render(args, info, "2026-12-01 03:00", meta, results, {}, "openglue 0.1.0")
    assert "| throughput ≥ 0.8× the pyarrow reference's | 0.50× (per CPU-second: 0.91×) | **no** |" in text
    assert "| peak RSS < 1.5 GB (input 2.00 GB) | 1,600 MB | **no** |" in text
    assert "| same rows and values as the reference | 2 differences | **no** |" in text
    assert "- openglue: a" in text


def test_repeat_keeps_and_checks_the_fastest_runs_output(tmp_path, monkeypatch):
    """--repeat 2 where the first round is the faster one: its output must still be there for
    the check (the slower round's is the one removed)."""
    walls = iter([1.0, 2.0])

    def fake_run_one(name, args, csv_path, workdir, rep):
        out = os.path.join(workdir, f"round-{rep}", f"out-{name}")
        ref_pyarrow.run(csv_path, out)
        return {"exit": 0, "wall_s": next(walls), "cpu_s": 1.0, "peak_rss": 1e8, "output": out}

    monkeypatch.setattr(etl_run, "run_one", fake_run_one)
    result = tmp_path / "r.json"
    assert etl_run.main(["--rows", "2000", "--only", "pyarrow", "--repeat", "2", "--cache-dir",
                         str(tmp_path / "cache"), "--no-write-doc", "--json", str(result)]) == 0
    import json
    r = json.load(open(result))["results"]["pyarrow"]
    assert r["wall_s"] == 1.0 and r["walls_s"] == [1.0, 2.0] and r["check"] == "identical"


def test_measure_counts_the_whole_process_tree(tmp_path):
    """A grandchild the process never waits for (as pyspark's JVM) is in the row's CPU: wait4's
    rusage misses it, the /proc samples of the tree do not."""
    script = ("import os, subprocess, sys, time\n"
              "subprocess.Popen([sys.executable, '-c', 'import time\\nt = time.time()\\n"
              "while time.time() - t < 1.5: pass'])\n"
              "time.sleep(1.8)\n"
              "os._exit(0)\n")
    r = etl_run.measure([sys.executable, "-c", script], dict(os.environ), 60,
                        str(tmp_path / "log"))
    assert r["exit"] == 0
    assert r["rusage_cpu_s"] < 0.5, r
    assert r["cpu_s"] >= 1.0, r
    assert "python3" in " ".join(r["processes"]) or "python" in " ".join(r["processes"])
