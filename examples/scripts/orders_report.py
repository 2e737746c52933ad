"""A Glue Python shell job: reads the catalog, writes a partition report, prints progress.

Runs unchanged on AWS Glue (where boto3 finds Glue by itself) and on OpenGlue (where the run's
environment points boto3 at the server).
"""
import json
import os
import sys

import boto3
from awsglue.utils import getResolvedOptions

args = getResolvedOptions(sys.argv, ["JOB_NAME", "JOB_RUN_ID", "database", "table", "report"])
glue = boto3.client("glue")
print(f"[{args['JOB_NAME']}] reading partitions of {args['database']}.{args['table']}")
counts = {}
for page in glue.get_paginator("get_partitions").paginate(DatabaseName=args["database"],
                                                            TableName=args["table"]):
    for p in page["Partitions"]:
        year = p["Values"][0]
        counts[year] = counts.get(year, 0) + 1
print(f"[{args['JOB_NAME']}] partitions per year: {counts}")
os.makedirs(os.path.dirname(args["report"]), exist_ok=True)
with open(args["report"], "w") as f:
    json.dump({"run": args["JOB_RUN_ID"], "partitions_per_year": counts}, f)
print(f"[{args['JOB_NAME']}] wrote {args['report']}")
