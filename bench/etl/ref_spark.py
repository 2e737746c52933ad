#!/usr/bin/env python3
"""The ETL benchmark's transformation on Apache Spark (pyspark, local mode), in Spark's own
DataFrame API: what the Glue script does, as a Spark user would write it.

    python3 bench/etl/ref_spark.py --input orders.csv --output out/ [--master local[2]]

Reads the CSV with its header (every column text, RFC 4180 quoting: `"` escapes `"`, empty
values null), casts every column to its target type as ApplyMapping does (a value that does not
convert becomes null), writes snappy Parquet partitioned by order_date (Hive-style folders).
The session is built by openglue_runtime.engines.spark.conf.session_conf, as a job run's is (with
OPENGLUE_WORKER_TYPE / OPENGLUE_NUMBER_OF_WORKERS from the environment when set), plus two
output settings so that the files hold the reference's types: timestamps without time zone
(TIMESTAMP_NTZ, microseconds).

Prints one JSON line at the end: {"startup_s": SparkSession ready after the process started,
"work_s": read + transform + write, "rows": rows written}.
"""
import argparse
import json
import os
import sys
import time

T0 = time.perf_counter()

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from etl_schema import COLUMNS, PARTITION  # noqa: E402

SPARK_TYPES = {"long": "bigint", "int": "int", "double": "double", "decimal": "decimal(10,2)",
               "string": "string", "boolean": "boolean", "date": "date", "timestamp": "timestamp"}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--master", default=None, help="Spark master [session_conf's: local[*] or sized]")
    args = p.parse_args(argv)

    from pyspark import SparkConf
    from pyspark.sql import SparkSession
    from pyspark.sql.functions import col

    from openglue_runtime.engines.spark.conf import session_conf, spark_environment

    job_args = {"--JOB_NAME": "bench_etl_spark"}
    if args.master:
        job_args["--spark-master"] = args.master
    conf = session_conf(job_args)
    conf.update({"spark.sql.timestampType": "TIMESTAMP_NTZ",
                 "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
                 "spark.sql.parquet.compression.codec": "snappy",
                 "spark.sql.session.timeZone": "UTC",
                 "spark.ui.enabled": "false"})
    for name, value in spark_environment(conf).items():
        os.environ.setdefault(name, value)
    spark = SparkSession.builder.config(conf=SparkConf().setAll(list(conf.items()))).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    startup = time.perf_counter() - T0

    t1 = time.perf_counter()
    raw = (spark.read.option("header", "true").option("quote", '"').option("escape", '"')
           .option("inferSchema", "false").csv(args.input))
    typed = raw.select(*[col(name).cast(SPARK_TYPES[glue]).alias(name) for name, glue in COLUMNS])
    typed.write.mode("overwrite").partitionBy(PARTITION).parquet(args.output)
    work = time.perf_counter() - t1
    rows = spark.read.parquet(args.output).count() if os.environ.get("REF_SPARK_COUNT") else None
    spark.stop()
    print(json.dumps({"startup_s": round(startup, 3), "work_s": round(work, 3), "rows": rows,
                      "master": conf["spark.master"], "driver_memory": conf.get("spark.driver.memory")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
