"""A Glue ETL job: raw CSV orders from the Data Catalog -> typed, partitioned Parquet, catalogued.

Runs unchanged on AWS Glue and on OpenGlue (`make demo` runs it as a job of the embedded engine).
Reads the catalog table --source_table (CSV files with a header), casts the columns with
ApplyMapping, writes snappy Parquet partitioned by order_date into the location of the catalog
table --target_table, and adds the partitions it wrote to that table (enableUpdateCatalog).
"""
import sys

from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import ApplyMapping
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "database", "source_table", "target_table"])
glue_context = GlueContext(SparkContext.getOrCreate())
logger = glue_context.get_logger()
job = Job(glue_context)
job.init(args["JOB_NAME"], args)

raw = glue_context.create_dynamic_frame.from_catalog(
    database=args["database"], table_name=args["source_table"], transformation_ctx="raw")
logger.info(f"read {raw.count()} rows from {args['database']}.{args['source_table']}")

orders = ApplyMapping.apply(frame=raw, mappings=[
    ("order_id", "long", "order_id", "long"),
    ("customer", "string", "customer", "string"),
    ("city", "string", "city", "string"),
    ("quantity", "int", "quantity", "int"),
    ("unit_price", "string", "unit_price", "decimal(10,2)"),
    ("is_gift", "string", "is_gift", "boolean"),
    ("created_at", "string", "created_at", "timestamp"),
    ("order_date", "string", "order_date", "date"),
], transformation_ctx="orders")
orders.printSchema()

glue_context.write_dynamic_frame.from_catalog(
    frame=orders, database=args["database"], table_name=args["target_table"],
    additional_options={"enableUpdateCatalog": True, "updateBehavior": "UPDATE_IN_DATABASE",
                        "partitionKeys": ["order_date"]},
    transformation_ctx="curated")
logger.info(f"wrote {orders.count()} rows to {args['database']}.{args['target_table']}")
job.commit()
