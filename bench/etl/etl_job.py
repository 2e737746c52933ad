"""The ETL benchmark's job: an ordinary AWS Glue script (runs unchanged on AWS Glue).

Reads the orders CSV (with a header), casts every column with ApplyMapping, writes snappy
Parquet partitioned by order_date (Hive-style folders). bench/etl/run.py runs it twice: in-process
(`python3 bench/etl/etl_job.py --JOB_NAME bench_etl --input orders.csv --output out/`, the
embedded engine, no server) and as a job run of an OpenGlue server (StartJobRun, the paths then
`s3://...` in the server's embedded store).

The mapping's types are the benchmark's schema (bench/etl/gen_csv.py COLUMNS): spelled out here
so that the script stands alone, as a Glue script does.
"""
import sys

from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import ApplyMapping
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

MAPPINGS = [
    ("order_id", "long", "order_id", "long"),
    ("customer_id", "int", "customer_id", "int"),
    ("product_id", "int", "product_id", "int"),
    ("sku", "string", "sku", "string"),
    ("quantity", "int", "quantity", "int"),
    ("unit_price", "double", "unit_price", "decimal"),
    ("discount", "double", "discount", "double"),
    ("amount", "double", "amount", "double"),
    ("tax", "double", "tax", "decimal"),
    ("customer_name", "string", "customer_name", "string"),
    ("city", "string", "city", "string"),
    ("status", "string", "status", "string"),
    ("is_priority", "string", "is_priority", "boolean"),
    ("comment", "string", "comment", "string"),
    ("order_date", "string", "order_date", "date"),
    ("created_at", "string", "created_at", "timestamp"),
]

args = getResolvedOptions(sys.argv, ["JOB_NAME", "input", "output"])
glue_context = GlueContext(SparkContext.getOrCreate())
job = Job(glue_context)
job.init(args["JOB_NAME"], args)

orders = glue_context.create_dynamic_frame.from_options(
    connection_type="s3",
    connection_options={"paths": [args["input"]]},
    format="csv",
    format_options={"withHeader": True, "separator": ",", "quoteChar": '"'},
    transformation_ctx="orders")
typed = ApplyMapping.apply(frame=orders, mappings=MAPPINGS, transformation_ctx="typed")
glue_context.write_dynamic_frame.from_options(
    frame=typed,
    connection_type="s3",
    connection_options={"path": args["output"], "partitionKeys": ["order_date"]},
    format="parquet",
    format_options={"compression": "snappy"},
    transformation_ctx="curated")
job.commit()
