#!/usr/bin/env python3
"""The ETL benchmark's near-limit reference: the job's transformation written directly with pyarrow.

    python3 bench/etl/ref_pyarrow.py --input orders.csv --output out/ [--writer direct|dataset]

Streams the CSV with pyarrow.csv.open_csv (header, RFC 4180 quoting, empty values null, each
column converted straight to its target type: int32/int64/float64/decimal128(10,2)/bool/date32/
timestamp[us]/utf8), then writes snappy Parquet in Hive-style folders `order_date=2024-03-17/`
(the key not repeated inside the files), one file per partition, row groups of 65,536 rows:

- `direct` (the default, the reference): each batch is sorted by the key and cut into one slice
  per partition, slices are buffered per partition and written as a row group by a
  pyarrow.parquet.ParquetWriter (one per partition) when 65,536 rows are there, on a pool of
  one thread per core (one row group at a time per partition, at most two per core in flight).
  Bounded memory: about a row group per partition, the row groups in flight, and the reader's
  read-ahead.
- `dataset`: pyarrow.dataset.write_dataset(partitioning=hive) with the same row group size: the
  same files, written by the dataset writer's own threads.
"""
import argparse
import concurrent.futures
import os
import sys
import threading

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as csv
import pyarrow.dataset as ds
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from etl_schema import PARTITION, target_schema  # noqa: E402

BLOCK = 8 << 20
ROW_GROUP = 65536
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def open_reader(input_path, schema):
    return csv.open_csv(
        input_path,
        read_options=csv.ReadOptions(block_size=BLOCK, use_threads=True),
        parse_options=csv.ParseOptions(delimiter=",", quote_char='"', double_quote=True),
        convert_options=csv.ConvertOptions(
            column_types={f.name: f.type for f in schema}, include_columns=schema.names,
            null_values=[""], strings_can_be_null=True, quoted_strings_can_be_null=False,
            true_values=["true"], false_values=["false"]))


def write_direct(reader, output, schema):
    data_schema = pa.schema([f for f in schema if f.name != PARTITION])
    buffers, rows, writers, locks = {}, {}, {}, {}
    threads = os.cpu_count() or 1
    pool = concurrent.futures.ThreadPoolExecutor(threads)
    in_flight = threading.BoundedSemaphore(2 * threads)   # row groups being encoded at once
    futures = []

    def encode(key, table):
        # Encoding and compressing a row group releases the GIL: row groups of different
        # partitions are written on the pool's threads at once, one at a time per partition.
        try:
            with locks[key]:
                writers[key].write_table(table, row_group_size=ROW_GROUP)
        finally:
            in_flight.release()

    def flush(key):
        if not rows.get(key):
            return
        if key not in writers:
            folder = os.path.join(output, f"{PARTITION}={HIVE_NULL if key is None else key}")
            os.makedirs(folder, exist_ok=True)
            writers[key] = pq.ParquetWriter(os.path.join(folder, "part-0.snappy.parquet"),
                                            data_schema, compression="snappy")
            locks[key] = threading.Lock()
        table = pa.Table.from_batches(buffers[key], data_schema)
        buffers[key], rows[key] = [], 0
        in_flight.acquire()
        futures.append(pool.submit(encode, key, table))
        if len(futures) > 4 * threads:
            done = [f for f in futures if f.done()]
            for f in done:
                f.result()               # raises the first error
                futures.remove(f)

    try:
        for batch in reader:
            if batch.num_rows == 0:
                continue
            batch = batch.take(pc.sort_indices(batch.column(PARTITION)))
            runs = pc.run_end_encode(batch.column(PARTITION))
            data = batch.drop_columns([PARTITION])
            start = 0
            for end, key in zip(runs.run_ends.to_pylist(), runs.values.to_pylist()):
                buffers.setdefault(key, []).append(data.slice(start, end - start))
                rows[key] = rows.get(key, 0) + end - start
                start = end
                if rows[key] >= ROW_GROUP:
                    flush(key)
        for key in list(buffers):
            flush(key)
        for f in futures:
            f.result()
    finally:
        pool.shutdown(wait=True)
        for w in writers.values():
            w.close()


def write_with_dataset(reader, output, schema):
    fmt = ds.ParquetFileFormat()
    ds.write_dataset(
        reader, output, format=fmt,
        file_options=fmt.make_write_options(compression="snappy"),
        partitioning=ds.partitioning(pa.schema([schema.field(PARTITION)]), flavor="hive"),
        basename_template="part-{i}.snappy.parquet",
        existing_data_behavior="overwrite_or_ignore",
        min_rows_per_group=ROW_GROUP, max_rows_per_group=ROW_GROUP, use_threads=True)


def run(input_path, output, writer="direct"):
    schema = target_schema()
    reader = open_reader(input_path, schema)
    os.makedirs(output, exist_ok=True)
    (write_direct if writer == "direct" else write_with_dataset)(reader, output, schema)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--writer", choices=("direct", "dataset"), default="direct",
                   help="how the Parquet files are written [direct]")
    args = p.parse_args(argv)
    run(args.input, args.output, args.writer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
