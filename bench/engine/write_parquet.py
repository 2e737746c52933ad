"""Write throughput of openglue_runtime.engines.embedded._engine.write against pyarrow.dataset.write_dataset.

A ~500 MB in-memory table (8 columns: ints, doubles, decimals, strings, a timestamp and a date
with 30 distinct days in random row order) is written as snappy Parquet partitioned by the date
column, once by each writer, each in a fresh process. Reports wall time, MB/s of the table's
in-memory size, CPU seconds and the peak RSS above the process's RSS once the table is built.

    PYTHONPATH=python .venv/bin/python3 bench/engine/write_parquet.py [--rows N] [--dir D]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def rss_kib():
    return status_kib("VmRSS")


def reset_peak():
    # Linux: writing 5 to clear_refs resets VmHWM (the peak RSS) to the current RSS, so the peak
    # measured after the write is the write's own, not the table generation's.
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def child(which, rows, out, partition=True):
    import numpy as np
    import pyarrow as pa
    rng = np.random.default_rng(7)
    day = pa.array(rng.integers(19700, 19730, rows).astype("int32")).cast(pa.date32())
    names = np.array([f"customer-{i:06d}" for i in range(5000)], dtype=object)
    table = pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "qty": pa.array(rng.integers(1, 100, rows).astype(np.int32)),
        "price": pa.array(rng.random(rows) * 100),
        "amount": pa.array(rng.integers(0, 10_000_000, rows)).cast(pa.decimal128(21, 2)),
        "customer": pa.array(names[rng.integers(0, 5000, rows)], pa.string()),
        "category": pa.array(np.array(["books", "games", "garden", "music", "tools"], dtype=object)[rng.integers(0, 5, rows)], pa.string()),
        "ts": pa.array(rng.integers(1_700_000_000_000_000, 1_702_000_000_000_000, rows)).cast(pa.timestamp("us")),
        "day": day,
    })
    base = rss_kib()
    reset_peak()
    start_cpu = time.process_time()
    start = time.perf_counter()
    if which == "openglue":
        from openglue_runtime.engines.embedded import _engine
        files = _engine.write(table, out, "parquet", {"compression": "snappy"}, ["day"] if partition else [], {})
    else:
        import pyarrow.dataset as ds
        ds.write_dataset(table, out, format="parquet", partitioning=["day"] if partition else None,
                         partitioning_flavor="hive" if partition else None,
                         file_options=ds.ParquetFileFormat().make_write_options(compression="snappy"),
                         existing_data_behavior="overwrite_or_ignore")
        files = [os.path.join(d, f) for d, _, fs in os.walk(out) for f in fs]
    wall = time.perf_counter() - start
    cpu = time.process_time() - start_cpu
    peak = status_kib("VmHWM")
    size = sum(os.path.getsize(f) for f in files)
    print(json.dumps({"writer": which, "partitioned": partition, "rows": rows, "table_mb": table.nbytes / 1e6, "wall_s": wall,
                      "cpu_s": cpu, "mb_per_s": table.nbytes / 1e6 / wall, "files": len(files),
                      "output_mb": size / 1e6, "base_rss_mb": base / 1024,
                      "peak_rss_mb": peak / 1024, "peak_above_base_mb": (peak - base) / 1024}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=7_000_000)
    parser.add_argument("--dir", default=None)
    parser.add_argument("--child", default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-partition", action="store_true", help="one output folder, no partition column")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.rows, args.out, not args.no_partition)
        return
    work = tempfile.mkdtemp(dir=args.dir, prefix="og-write-bench-")
    try:
        for _ in range(args.repeat):
            for which in ("pyarrow", "openglue"):
                out = os.path.join(work, which)
                shutil.rmtree(out, ignore_errors=True)
                result = subprocess.run([sys.executable, __file__, "--child", which, "--rows", str(args.rows),
                                         "--out", out] + (["--no-partition"] if args.no_partition else []), capture_output=True, text=True, timeout=1200)
                if result.returncode != 0:
                    print(result.stderr, file=sys.stderr)
                    sys.exit(1)
                print(result.stdout.strip(), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
