"""A bookmarked Glue job: each run reads only the event files added since the last run.

Runs unchanged on AWS Glue and on OpenGlue (`make demo` runs it with
--job-bookmark-option job-bookmark-enable, then paused, then after a reset). Reads the catalog
table --table (made by a crawler), appends what it read as Parquet under --output, and commits
the bookmark with job.commit(); transformation_ctx names the bookmarked source.
"""
import sys

from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "database", "table", "output"])
glue_context = GlueContext(SparkContext.getOrCreate())
job = Job(glue_context)
job.init(args["JOB_NAME"], args)

events = glue_context.create_dynamic_frame.from_catalog(
    database=args["database"], table_name=args["table"], transformation_ctx="events")
rows = events.count()
print(f"this run read {rows} rows")
if rows:
    glue_context.write_dynamic_frame.from_options(
        frame=events, connection_type="s3", connection_options={"path": args["output"]},
        format="parquet", transformation_ctx="events_out")
job.commit()
