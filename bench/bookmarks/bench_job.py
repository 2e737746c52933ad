"""The bookmarks benchmark's job script (bench/bookmarks/run.py): a Glue script that reads every
JSON object under --path with transformation_ctx "in", counts the rows and commits.

It writes to --out: the row count and, on the run's own clock, how long `from_options` took
(listing + bookmark selection + planning the scan) and the count (reading the selected objects).
"""
import json
import sys
import time

from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

t0 = time.perf_counter()
args = getResolvedOptions(sys.argv, ["JOB_NAME", "path", "out"])
glue_context = GlueContext(SparkContext.getOrCreate())
job = Job(glue_context)
job.init(args["JOB_NAME"], args)
t1 = time.perf_counter()
frame = glue_context.create_dynamic_frame.from_options(
    "s3", {"paths": [args["path"]]}, "json", transformation_ctx="in")
t2 = time.perf_counter()
rows = frame.count()
t3 = time.perf_counter()
job.commit()
t4 = time.perf_counter()
with open(args["out"], "w") as f:
    json.dump({"rows": rows, "init_s": t1 - t0, "source_s": t2 - t1, "read_s": t3 - t2,
               "commit_s": t4 - t3}, f)
