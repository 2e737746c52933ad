"""Read throughput of openglue_runtime.engines.embedded._engine's CSV scan vs pyarrow.csv.open_csv (one process per run).

    python bench/engine/read_csv.py gen  FILE MB        # write a generated CSV of about MB megabytes
    python bench/engine/read_csv.py run  FILE MODE      # MODE: engine | engine-schema | pyarrow

Prints one line: mode, seconds, MB/s, rows, peak RSS (MiB). 12 columns: ints, longs, doubles,
strings, dates, timestamps and decimals, with a header.
"""
import os
import resource
import sys
import time

import pyarrow as pa
import pyarrow.csv as pacsv

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))


def gen(path, megabytes):
    import random
    rnd = random.Random(7)
    n = 200_000
    cols = {
        "id": pa.array(range(n)),
        "qty": pa.array([rnd.randint(0, 1000) for _ in range(n)]),
        "big": pa.array([rnd.randint(0, 2**40) for _ in range(n)]),
        "price": pa.array([round(rnd.random() * 1000, 2) for _ in range(n)]),
        "ratio": pa.array([rnd.random() for _ in range(n)]),
        "name": pa.array([f"name-{rnd.randint(0, 99999)}" for _ in range(n)]),
        "city": pa.array([rnd.choice(["Paris", "Berlin", "Oslo", "Lima", "Quito"]) for _ in range(n)]),
        "day": pa.array([f"2024-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}" for _ in range(n)]),
        "ts": pa.array([f"2024-05-{rnd.randint(1, 28):02d} 12:{rnd.randint(0, 59):02d}:00" for _ in range(n)]),
        "amount": pa.array([f"{rnd.randint(0, 99999)}.{rnd.randint(0, 99):02d}" for _ in range(n)]),
        "flag": pa.array([rnd.choice(["true", "false"]) for _ in range(n)]),
        "note": pa.array([rnd.choice(["", "fragile", "express delivery, signed"]) for _ in range(n)]),
    }
    table = pa.table(cols)
    with open(path, "wb") as out:
        sink = pa.BufferOutputStream()
        pacsv.write_csv(table, sink)
        chunk = sink.getvalue().to_pybytes()
        header, body = chunk.split(b"\n", 1)
        out.write(header + b"\n")
        written = len(header) + 1
        while written < megabytes * 1_000_000:
            out.write(body)
            written += len(body)


SCHEMA = pa.schema([("id", pa.int64()), ("qty", pa.int32()), ("big", pa.int64()),
                    ("price", pa.float64()), ("ratio", pa.float64()), ("name", pa.string()),
                    ("city", pa.string()), ("day", pa.date32()), ("ts", pa.timestamp("us")),
                    ("amount", pa.decimal128(10, 2)), ("flag", pa.bool_()), ("note", pa.string())])


def run(path, mode):
    size = os.path.getsize(path)
    start = time.monotonic()
    rows = 0
    if mode == "pyarrow":
        reader = pacsv.open_csv(path)
    else:
        from openglue_runtime.engines.embedded import _engine
        scan = _engine.scan([path], "csv", {"withHeader": "true"}, {})
        stream = scan.stream(SCHEMA if mode == "engine-schema" else None)
        reader = pa.RecordBatchReader.from_stream(stream)
    for batch in reader:
        rows += batch.num_rows
    seconds = time.monotonic() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{mode:14s} {seconds:7.2f} s {size / 1e6 / seconds:8.1f} MB/s rows={rows} peak_rss={rss:.0f} MiB")


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], int(sys.argv[3]))
    else:
        run(sys.argv[2], sys.argv[3])
