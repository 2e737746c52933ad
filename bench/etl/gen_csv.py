#!/usr/bin/env python3
"""Generates the ETL benchmark's input: a deterministic CSV of orders with a header.

    python3 bench/etl/gen_csv.py --size-gb 2 --out /tmp/orders.csv
    python3 bench/etl/gen_csv.py --rows 100000 --out /tmp/orders.csv

16 columns of mixed types, as text: longs (order_id, past 32 bits), ints, doubles, decimals with
two digits (`1234.56`), strings some of which hold commas and double quotes (quoted as RFC 4180
says, `"Smith, Jr."`, `"Customer said ""fragile"" "`; the others unquoted), booleans (`true`/`false`), dates
(`2024-03-17`: order_date, spread over 30 days in random order, the partition column),
timestamps (`2024-03-17 12:34:56`) and empty values (nulls) in four columns. The same
arguments give the same bytes (seeded Arrow random numbers, one seed per chunk). Vectorised with
pyarrow compute: the lines of a chunk are joined in Arrow and written as one buffer.

COLUMNS below is the schema every implementation casts to (bench/etl/ref_*.py, etl_job.py).
"""
import argparse
import collections
import concurrent.futures
import itertools
import os
import sys
import time

import pyarrow as pa
import pyarrow.compute as pc

GENERATOR_VERSION = 1   # bump when the bytes produced change (run.py's cache key)
SEED = 20240301
CHUNK_ROWS = 500_000
FIRST_DATE = 19783      # 2024-03-01 as days since the epoch
DAYS = 30

# (column, Glue type the ETL casts it to). The mapping every implementation applies.
COLUMNS = [
    ("order_id", "long"),
    ("customer_id", "int"),
    ("product_id", "int"),
    ("sku", "string"),
    ("quantity", "int"),
    ("unit_price", "decimal"),      # decimal(10,2), Glue's default precision and scale
    ("discount", "double"),
    ("amount", "double"),
    ("tax", "decimal"),
    ("customer_name", "string"),
    ("city", "string"),
    ("status", "string"),
    ("is_priority", "boolean"),
    ("comment", "string"),
    ("order_date", "date"),
    ("created_at", "timestamp"),
]
PARTITION = "order_date"

FIRST = ["James", "Mary", "Robert", "Patricia", "John", "Jennifer", "Michael", "Linda", "David",
         "Elizabeth", "William", "Barbara", "Richard", "Susan", "Joseph", "Jessica", "Thomas",
         "Sarah", "Chen", "Aiko", "José", "Zoë", "François", "Ngozi", "Dmitri", "Priya"]
LAST = ["Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis",
        "Rodriguez", "Martinez", "O'Neil", "Smith, Jr.", "\"Bud\" Jones", "van der Berg",
        "Lopez, III", "Nguyen", "Müller", "Wang", "Kowalski", "d'Arcy"]
CITIES = ["Seattle", "Portland", "Washington, D.C.", "New York", "Austin", "Chicago", "Denver",
          "St. Louis", "Boston", "San José", "Paris", "Berlin", "Tokyo", "Lagos", "São Paulo",
          "Winston-Salem", "Baltimore", "Atlanta", "Phoenix", "Miami"]
STATUSES = ["NEW", "PAID", "SHIPPED", "DELIVERED", "RETURNED", "CANCELLED"]
COMMENTS = ["Leave at the door, ring twice", "Customer said \"fragile\"", "gift wrap",
            "call before delivery", "Deliver after 5pm, not before", "\"ASAP\", please",
            "back entrance", "no plastic, paper bags only", "reorder", "price match, manager OK",
            "second attempt", "signed by \"J. Doe\", neighbour", "handle with care"]


def quote(text):
    """RFC 4180: quoted when it holds a comma, a quote or a line break, quotes doubled."""
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def vocabulary(values):
    return pa.array([quote(v) for v in values], pa.string())


NAMES = vocabulary(f"{f} {l}" for f, l in itertools.product(FIRST, LAST))
CITY = vocabulary(CITIES)
STATUS = vocabulary(STATUSES)
COMMENT = vocabulary(COMMENTS)


def _uniform(n, seed):
    return pc.random(n, initializer=seed)


def _int_below(r, bound):
    """Integers in [0, bound) from uniform doubles in [0, 1)."""
    return pc.cast(pc.floor(pc.multiply(r, float(bound))), pa.int64())


def _text(values):
    return pc.cast(values, pa.string())


def _cents_text(cents):
    """'1234.56' from an int64 count of cents (>= 0)."""
    whole = _text(pc.divide(cents, 100))
    frac = pc.utf8_lpad(_text(pc.subtract(cents, pc.multiply(pc.divide(cents, 100), 100))), 2, "0")
    return pc.binary_join_element_wise(whole, frac, ".")


def _with_nulls(values, r, fraction):
    """values with about `fraction` of them null (empty in the CSV)."""
    return pc.if_else(pc.less(r, fraction), pa.scalar(None, values.type), values)


def chunk_lines(start, n):
    """The CSV text of rows start .. start+n-1 (each line ends with \\n), as bytes-like."""
    seed = SEED + start * 7919      # start: a multiple of CHUNK_ROWS
    rs = [_uniform(n, seed + k) for k in range(12)]
    row = pa.array(range(start, start + n), pa.int64())
    order_id = pc.add(row, 5_000_000_000)
    customer_id = pc.add(_int_below(rs[0], 2_000_000), 1)
    product_id = pc.add(_int_below(rs[1], 50_000), 1)
    sku = pc.binary_join_element_wise("SKU-", pc.utf8_lpad(_text(product_id), 6, "0"), "")
    quantity = pc.add(_int_below(rs[2], 20), 1)
    price_cents = pc.add(_int_below(pc.multiply(rs[3], rs[3]), 500_000), 99)  # 0.99 .. 5000.98
    discount = pc.round(pc.multiply(rs[4], 0.3), 4)
    gross = pc.multiply(pc.multiply(pc.cast(price_cents, pa.float64()), 0.01), pc.cast(quantity, pa.float64()))
    amount = pc.round(pc.multiply(gross, pc.subtract(1.0, discount)), 2)
    tax_cents = pc.cast(pc.round(pc.multiply(amount, 8.0)), pa.int64())   # 8 % in cents
    name = NAMES.take(_int_below(rs[5], len(NAMES)))
    city = CITY.take(_int_below(rs[6], len(CITY)))
    status = STATUS.take(_int_below(rs[7], len(STATUS)))
    priority = pc.less(rs[8], 0.1)
    comment = COMMENT.take(_int_below(rs[9], len(COMMENT)))
    comment = pc.if_else(pc.less(rs[10], 0.7), pa.scalar(None, pa.string()), comment)
    day = _int_below(rs[11], DAYS)
    order_date = pc.cast(pc.cast(pc.add(day, FIRST_DATE), pa.int32()), pa.date32())
    second = pc.add(pc.multiply(pc.add(day, FIRST_DATE), 86400), _int_below(rs[0], 86400))
    created_at = pc.strftime(pc.cast(second, pa.timestamp("s")), format="%Y-%m-%d %H:%M:%S")
    # Empty values: quantity 2 %, discount 5 %, city 1 %, comment 70 % (above).
    quantity = _with_nulls(quantity, rs[1], 0.02)      # rs[1] < 0.02: product_id's low range
    discount_text = _with_nulls(_text(discount), rs[6], 0.01 * 5)
    city = _with_nulls(city, pc.subtract(1.0, rs[6]), 0.01)
    cols = [_text(order_id), _text(customer_id), _text(product_id), sku, _text(quantity),
            _cents_text(price_cents), discount_text, _text(amount), _cents_text(tax_cents), name,
            city, status, _text(priority), comment, _text(order_date), created_at]
    cols = [pc.fill_null(c, "") for c in cols]
    line = pc.binary_join_element_wise(*cols, ",")
    line = pc.binary_join_element_wise(line, "\n", "")
    line = line.combine_chunks() if isinstance(line, pa.ChunkedArray) else line
    offsets = line.buffers()[1]
    first = pa.Array.from_buffers(pa.int32(), 1, [None, offsets], offset=0)[0].as_py()
    last = pa.Array.from_buffers(pa.int32(), 1, [None, offsets], offset=len(line))[0].as_py()
    return memoryview(line.buffers()[2])[first:last]


def header():
    return (",".join(name for name, _ in COLUMNS) + "\n").encode()


def rows_for_size(size_bytes):
    """How many rows make about `size_bytes` bytes (measured on the first chunk)."""
    per_row = len(chunk_lines(0, CHUNK_ROWS)) / CHUNK_ROWS
    return max(1, int((size_bytes - len(header())) / per_row))


def generate(out, rows=None, size_bytes=None, progress=False, threads=None):
    """Writes the CSV with `rows` data rows, or about `size_bytes` bytes. Chunks of 500,000 rows
    are made on `threads` threads (Arrow's kernels release the GIL) and written in order.
    Returns (rows, bytes)."""
    assert (rows is None) != (size_bytes is None)
    if rows is None:
        rows = rows_for_size(size_bytes)
    threads = threads or min(4, os.cpu_count() or 1)
    tmp = f"{out}.tmp-{os.getpid()}"
    written = 0
    total = 0
    t0 = time.time()
    starts = range(0, rows, CHUNK_ROWS)
    with open(tmp, "wb") as f, concurrent.futures.ThreadPoolExecutor(threads) as pool:
        data = header()
        f.write(data)
        total += len(data)
        pending = collections.deque()
        for start in starts:
            pending.append(pool.submit(chunk_lines, start, min(CHUNK_ROWS, rows - start)))
            if len(pending) > threads:     # bounded: at most threads + 1 chunks in memory
                total, written = _drain(f, pending.popleft(), total, written, t0, progress)
        while pending:
            total, written = _drain(f, pending.popleft(), total, written, t0, progress)
    if progress:
        print(file=sys.stderr)
    os.replace(tmp, out)
    return rows, total


def _drain(f, future, total, written, t0, progress):
    data = future.result()
    f.write(data)
    total += len(data)
    written += 1
    if progress:
        print(f"\r  {total / 1e9:6.2f} GB, {written} chunks, {time.time() - t0:5.1f} s",
              end="", file=sys.stderr, flush=True)
    return total, written


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--rows", type=int, help="number of data rows")
    g.add_argument("--size-gb", type=float, help="approximate size in GB (10^9 bytes)")
    p.add_argument("--out", required=True, help="the CSV file to write (replaced at once)")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    t0 = time.time()
    rows, size = generate(args.out, rows=args.rows,
                          size_bytes=int(args.size_gb * 1e9) if args.size_gb else None,
                          progress=not args.quiet)
    if not args.quiet:
        print(f"wrote {args.out}: {rows:,} rows, {size:,} bytes in {time.time() - t0:.1f} s",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
