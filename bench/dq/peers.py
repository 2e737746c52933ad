#!/usr/bin/env python3
"""The data-quality benchmark's peers, side by side in one process with OpenGlue's evaluator:
Soda Core 3.5.6 (SodaCL checks on DuckDB over the same Arrow table) and Great Expectations
1.24.1 (an expectation suite on a pandas DataFrame of the same rows), with the rules of
bench/dq/run.py's RULESET each can express (listed in docs/benchmarks.md).

The peers are not part of the project's pinned requirements: `make bench-dq-peers` makes a
virtual environment of their own (bench/dq/requirements-peers.txt) and runs this script there.

    python3 bench/dq/peers.py --rows 14000000
"""
import argparse
import importlib.util
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import benchlib  # noqa: E402

_spec = importlib.util.spec_from_file_location("dq_run", os.path.join(HERE, "run.py"))
dq_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dq_run)

STATUSES = ["NEW", "PAID", "SHIPPED", "DELIVERED", "RETURNED", "CANCELLED"]

SODACL = f"""
checks for orders:
  - row_count > 0
  - missing_count(order_id) = 0
  - duplicate_count(order_id) = 0
  - missing_percent(discount) < 50
  - missing_percent(comment) < 90
  - invalid_percent(quantity) < 10:
      valid min: 1
      valid max: 999
  - invalid_percent(amount) < 10:
      valid min: 0
  - invalid_percent(status) < 50:
      valid values: {STATUSES}
  - invalid_percent(sku) < 50:
      valid regex: '[A-Z0-9-]+'
  - max_length(city) <= 40
  - max_length(customer_name) < 80
  - avg(amount) > 0
  - sum(quantity) > 0
  - stddev(amount) > 0
  - freshness(created_at) < 100000d
"""
# Not expressible in SodaCL's built-in checks: ColumnCount (schema checks test names, not a
# count), DistinctValuesCount (Soda 3.5.6 on DuckDB: "Unsupported metric distinct"), the
# Uniqueness ratio, Entropy, ColumnCorrelation.


cpu, timed = dq_run.cpu, dq_run.timed   # the same clock as bench/dq/run.py


def soda(table):
    import duckdb
    from soda.scan import Scan
    con = duckdb.connect(":memory:")
    con.register("orders_arrow", table)
    con.execute("CREATE VIEW orders AS SELECT * FROM orders_arrow")

    def run():
        scan = Scan()
        scan.set_data_source_name("duckdb")
        scan.add_duckdb_connection(duckdb_connection=con, data_source_name="duckdb")
        scan.add_sodacl_yaml_str(SODACL)
        scan.execute()
        results = scan.get_scan_results()
        return [c.get("outcome") for c in results.get("checks", [])]
    return run


def great_expectations(df):
    import great_expectations as gx
    import great_expectations.expectations as E
    context = gx.get_context(mode="ephemeral")
    source = context.data_sources.add_pandas("pandas")
    batch = source.add_dataframe_asset("orders").add_batch_definition_whole_dataframe("all")
    suite = context.suites.add(gx.ExpectationSuite(name="orders"))
    for e in (E.ExpectTableRowCountToBeBetween(min_value=1),
              E.ExpectTableColumnCountToEqual(value=16),
              E.ExpectColumnValuesToNotBeNull(column="order_id"),
              E.ExpectColumnValuesToBeUnique(column="order_id"),
              E.ExpectColumnValuesToNotBeNull(column="discount", mostly=0.5),
              E.ExpectColumnValuesToNotBeNull(column="comment", mostly=0.1),
              E.ExpectColumnValuesToBeBetween(column="quantity", min_value=1, max_value=999, mostly=0.9),
              E.ExpectColumnValuesToBeBetween(column="amount", min_value=0, mostly=0.9),
              E.ExpectColumnValuesToBeInSet(column="status", value_set=STATUSES, mostly=0.5),
              E.ExpectColumnValuesToMatchRegex(column="sku", regex="^[A-Z0-9-]+$", mostly=0.5),
              E.ExpectColumnValueLengthsToBeBetween(column="city", max_value=40),
              E.ExpectColumnValueLengthsToBeBetween(column="customer_name", max_value=79),
              E.ExpectColumnMeanToBeBetween(column="amount", min_value=0, strict_min=True),
              E.ExpectColumnSumToBeBetween(column="quantity", min_value=0, strict_min=True),
              E.ExpectColumnStdevToBeBetween(column="amount", min_value=0, strict_min=True),
              E.ExpectColumnUniqueValueCountToBeBetween(column="status", min_value=2),
              E.ExpectColumnProportionOfUniqueValuesToBeBetween(column="customer_id", min_value=0.0)):
        suite.add_expectation(e)
    # Not expressible as GX core expectations: Entropy, ColumnCorrelation, DataFreshness.
    validation = context.validation_definitions.add(
        gx.ValidationDefinition(name="orders", data=batch, suite=suite))

    def run():
        result = validation.run(batch_parameters={"dataframe": df})
        return [r.success for r in result.results]
    return run


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=14_000_000)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--workdir", default=os.path.join("/tmp", "openglue-bench-dq"))
    p.add_argument("--skip", default="", help="comma-separated: soda, gx")
    args = p.parse_args(argv)
    os.makedirs(args.workdir, exist_ok=True)
    started, info = benchlib.begin_run()
    from openglue_runtime.quality import dqdl, evaluate as ev
    table, _ = dq_run.load(args.rows, args.workdir)
    benchlib.log(f"{table.num_rows:,} rows")
    parsed = dqdl.parse(dq_run.RULESET)
    backend = ev.DuckDBBackend(table)
    rows = []
    og = timed(lambda: [o.outcome for o in ev.evaluate(backend, parsed)[0].outcomes], args.repeat)
    rows.append(("OpenGlue (20 DQDL rules, DuckDB over Arrow)", og))
    if "soda" not in args.skip:
        benchlib.log("Soda Core")
        rows.append(("Soda Core 3.5.6 (15 SodaCL checks, DuckDB over Arrow)", timed(soda(table), args.repeat)))
    if "gx" not in args.skip:
        benchlib.log("Great Expectations: to pandas")
        c0, t0 = cpu(), time.perf_counter()
        df = table.to_pandas()
        conv = (time.perf_counter() - t0, cpu() - c0)
        benchlib.log("Great Expectations")
        gx = timed(great_expectations(df), 1)
        rows.append((f"Great Expectations 1.24.1 (17 expectations, pandas; the Arrow-to-pandas "
                     f"conversion, {conv[0]:.1f} s, not counted)", gx))
    print(f"\n{benchlib.run_text(started, argparse.Namespace(quick=False, argv=sys.argv[1:]), 'bench/dq/peers.py')} {benchlib.machine_text(info)}\n")
    print("| evaluation | wall | CPU user + sys | outcomes | vs OpenGlue |")
    print("|---|---:|---:|---|---:|")
    for name, (wall, c, outcomes) in rows:
        passed = sum(1 for o in outcomes if o in ("Passed", True, "pass"))
        print(f"| {name} | {wall:.2f} s | {c:.2f} s | {passed} of {len(outcomes)} passed | "
              f"{wall / og[0]:.2f}x |")


if __name__ == "__main__":
    main()
