#!/usr/bin/env python3
"""The ETL benchmark's second reference: DuckDB (PyPI, bench/requirements.txt) doing the same COPY.

    python3 bench/etl/ref_duckdb.py --input orders.csv --output out/

One statement: COPY (SELECT <each column CAST to its target type> FROM read_csv(<the file>,
header, RFC 4180 quoting, every column read as VARCHAR)) TO <out> (FORMAT parquet, COMPRESSION
snappy, PARTITION_BY (order_date)). TRY_CAST, as Glue's casts: a value that does not convert is
null. preserve_insertion_order is off (DuckDB's advice for streaming a large COPY in bounded
memory); every core is used.
"""
import argparse
import os
import sys

import duckdb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from etl_schema import COLUMNS, PARTITION  # noqa: E402

SQL_TYPES = {"long": "BIGINT", "int": "INTEGER", "double": "DOUBLE", "decimal": "DECIMAL(10,2)",
             "string": "VARCHAR", "boolean": "BOOLEAN", "date": "DATE", "timestamp": "TIMESTAMP"}


def quote_ident(name):
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text):
    return "'" + text.replace("'", "''") + "'"


def statement(input_path, output):
    select = ", ".join(
        quote_ident(n) if t == "string" else
        f"TRY_CAST({quote_ident(n)} AS {SQL_TYPES[t]}) AS {quote_ident(n)}" for n, t in COLUMNS)
    columns = ", ".join(f"{quote_literal(n)}: 'VARCHAR'" for n, _ in COLUMNS)
    return (f"COPY (SELECT {select} FROM read_csv({quote_literal(input_path)}, header = true, "
            f"delim = ',', quote = '\"', escape = '\"', auto_detect = false, "
            f"columns = {{{columns}}})) "
            f"TO {quote_literal(output)} (FORMAT parquet, COMPRESSION snappy, "
            f"PARTITION_BY ({quote_ident(PARTITION)}), OVERWRITE_OR_IGNORE true)")


def run(input_path, output):
    con = duckdb.connect()
    con.execute(f"SET threads = {os.cpu_count() or 1}")
    con.execute("SET preserve_insertion_order = false")
    con.execute(statement(input_path, output))
    con.close()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--print-sql", action="store_true", help="print the statement and exit")
    args = p.parse_args(argv)
    if args.print_sql:
        print(statement(args.input, args.output))
        return 0
    run(args.input, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
