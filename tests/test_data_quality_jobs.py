"""Glue Studio-shaped data-quality jobs as job runs of a real server (issue 21): the default
ruleset block Studio puts before every S3 target, a data-quality node whose failing rules fail
the job with Glue's message, results published to the server and read back through boto3
(ListDataQualityResults, GetDataQualityResult, BatchGetDataQualityResult), on the embedded
engine and on Spark.

The scripts follow the shape Glue Studio generates (header, `DEFAULT_DATA_QUALITY_RULESET`,
`EvaluateDataQuality().process_rows(...)` with Studio's publishing and additional options, the
`assert ... "The job failed due to failing DQ rules for node: <node>"` line); the expected
outcomes are computed in the test from the rows it wrote."""
import os

import pyarrow.parquet as pq
import pytest

from jobkit import kit, log_messages, unique  # noqa: F401

CSV = ("order_id,customer,amount,status\n"
       "1,ann,10.5,shipped\n"
       "2,bob,20.0,shipped\n"
       "3,cy,,pending\n"
       "4,dee,40.25,cancelled\n")

STUDIO = '''
import sys
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job
from awsgluedq.transforms import EvaluateDataQuality

args = getResolvedOptions(sys.argv, ['JOB_NAME', 'source', 'target'])
sc = SparkContext()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args['JOB_NAME'], args)

# Default ruleset used by all target nodes with data quality enabled
DEFAULT_DATA_QUALITY_RULESET = """
    Rules = [
        ColumnCount > 0
    ]
"""

# Script generated for node Amazon S3
AmazonS3_node1 = glueContext.create_dynamic_frame.from_options(format_options={"quoteChar": "\\"", "withHeader": True, "separator": ","}, connection_type="s3", format="csv", connection_options={"paths": [args['source']], "recurse": True}, transformation_ctx="AmazonS3_node1")

# Script generated for node Evaluate Data Quality
EvaluateDataQuality_node2_ruleset = """
    # Example rules: Completeness "colA" between 0.4 and 0.8, ColumnCount > 10
    Rules = [
        RowCount = 4,
        IsUnique "order_id",
        ColumnValues "status" in ["shipped", "pending", "cancelled"],
        __NODE_RULE__
    ]
"""

EvaluateDataQuality_node2 = EvaluateDataQuality().process_rows(frame=AmazonS3_node1, ruleset=EvaluateDataQuality_node2_ruleset, publishing_options={"dataQualityEvaluationContext": "EvaluateDataQuality_node2", "enableDataQualityCloudWatchMetrics": True, "enableDataQualityResultsPublishing": True}, additional_options={"observations.scope": "ALL", "performanceTuning.caching": "CACHE_NOTHING"})
assert EvaluateDataQuality_node2[EvaluateDataQuality.DATA_QUALITY_RULE_OUTCOMES_KEY].filter(lambda x: x["Outcome"] == "Failed").count() == 0, "The job failed due to failing DQ rules for node: EvaluateDataQuality_node2"

# Script generated for node originalData
originalData_node3 = SelectFromCollection.apply(dfc=EvaluateDataQuality_node2, key="originalData", transformation_ctx="originalData_node3")

# Script generated for node Amazon S3
EvaluateDataQuality().process_rows(frame=originalData_node3, ruleset=DEFAULT_DATA_QUALITY_RULESET, publishing_options={"dataQualityEvaluationContext": "EvaluateDataQuality_node1700000000000", "enableDataQualityResultsPublishing": True}, additional_options={"dataQualityResultsPublishing.strategy": "BEST_EFFORT", "observations.scope": "ALL"})
AmazonS3_node4 = glueContext.write_dynamic_frame.from_options(frame=originalData_node3, connection_type="s3", format="glueparquet", connection_options={"path": args['target'], "partitionKeys": []}, format_options={"compression": "snappy"}, transformation_ctx="AmazonS3_node4")

job.commit()
'''


def _put(server, bucket, key, body):
    path = os.path.join(server.data_dir, "s3", bucket, key)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(body)


def _studio_job(kit, server, node_rule, engine):
    bucket = unique("dq").replace("_", "-")
    _put(server, bucket, "in/orders.csv", CSV)
    job = kit.job(STUDIO.replace("__NODE_RULE__", node_rule))
    args = {"--source": f"s3://{bucket}/in/", "--target": f"s3://{bucket}/out/",
            "--engine": engine}
    return job, bucket, args


def _results(glue, job):
    ids = [r["ResultId"] for r in glue.list_data_quality_results(
        Filter={"JobName": job})["Results"]]
    got = glue.batch_get_data_quality_result(ResultIds=ids)
    assert got["ResultsNotFound"] == []
    return {r["EvaluationContext"]: r for r in got["Results"]}


@pytest.mark.parametrize("engine", ["embedded", "spark"])
def test_a_studio_job_with_a_passing_node_writes_its_rows_and_publishes_both_results(
        kit, glue, server, engine):
    job, bucket, args = _studio_job(kit, server, 'Completeness "amount" >= 0.75', engine)
    run = kit.run(job, timeout=240 if engine == "spark" else 60, Arguments=args)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    out = os.path.join(server.data_dir, "s3", bucket, "out")
    rows = pq.ParquetDataset(out).read().to_pylist()
    # the data-quality blocks change nothing: the four rows go through as read
    assert sorted(r["order_id"] for r in rows) == ["1", "2", "3", "4"]
    results = _results(glue, job)
    assert set(results) == {"EvaluateDataQuality_node2", "EvaluateDataQuality_node1700000000000"}
    node = results["EvaluateDataQuality_node2"]
    assert node["JobName"] == job and node["JobRunId"] == run["Id"]
    assert node["Score"] == 1.0
    # AWS's naming: Rule_1, Rule_2, ... with the rule's text in Description and EvaluatedRule
    assert [r["Name"] for r in node["RuleResults"]] == ["Rule_1", "Rule_2", "Rule_3", "Rule_4"]
    by_name = {r["EvaluatedRule"]: r for r in node["RuleResults"]}
    assert [by_name[n]["Result"] for n in ("RowCount = 4", 'IsUnique "order_id"',
            'Completeness "amount" >= 0.75')] == ["PASS", "PASS", "PASS"]
    # 3 of the 4 amounts are present
    assert by_name['Completeness "amount" >= 0.75']["EvaluatedMetrics"] == \
        {"Column.amount.Completeness": 0.75}
    assert by_name["RowCount = 4"]["EvaluatedMetrics"] == {"Dataset.*.RowCount": 4.0}
    default = results["EvaluateDataQuality_node1700000000000"]
    assert [(r["Description"], r["Result"]) for r in default["RuleResults"]] == [("ColumnCount > 0", "PASS")]
    single = glue.get_data_quality_result(ResultId=node["ResultId"])
    assert single["RuleResults"] == node["RuleResults"]
    assert single["StartedOn"] <= single["CompletedOn"]


def test_a_failing_node_fails_the_job_with_glues_message_and_writes_nothing(kit, glue, server):
    job, bucket, args = _studio_job(kit, server, 'IsComplete "amount"', "embedded")
    run = kit.run(job, timeout=60, Arguments=args)
    assert run["JobRunState"] == "FAILED"
    assert "The job failed due to failing DQ rules for node: EvaluateDataQuality_node2" in \
        run["ErrorMessage"]
    assert not os.path.exists(os.path.join(server.data_dir, "s3", bucket, "out"))
    node = _results(glue, job)["EvaluateDataQuality_node2"]
    failed = [r for r in node["RuleResults"] if r["Result"] == "FAIL"]
    assert [(r["EvaluatedRule"], r["EvaluationMessage"]) for r in failed] == [
        ('IsComplete "amount"', "Value: 0.75 does not meet the constraint requirement!")]
    assert node["Score"] == 0.75


def test_a_ruleset_that_is_not_dqdl_fails_the_run_naming_line_and_column(kit, glue, server):
    job, bucket, args = _studio_job(kit, server, 'Mean "amount" >', "embedded")
    run = kit.run(job, timeout=60, Arguments=args)
    assert run["JobRunState"] == "FAILED"
    assert "line 8, column 5: expected a number" in run["ErrorMessage"]
    assert glue.list_data_quality_results(Filter={"JobName": job})["Results"] == []


DYNAMIC = '''
import sys
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job
from awsgluedq.transforms import EvaluateDataQuality

args = getResolvedOptions(sys.argv, ['JOB_NAME', 'source'])
glueContext = GlueContext(SparkContext())
job = Job(glueContext)
job.init(args['JOB_NAME'], args)
frame = glueContext.create_dynamic_frame.from_options(connection_type="s3", format="csv", connection_options={"paths": [args['source']]}, format_options={"withHeader": True})
out = EvaluateDataQuality.apply(frame=frame, ruleset="Rules = [ RowCount = last(1), RowCount >= avg(last(3)) ]", publishing_options={"dataQualityEvaluationContext": "orders_dq"})
for row in out.to_arrow().to_pylist():
    print("OUTCOME", row["Rule"], row["Outcome"])
job.commit()
'''


def test_dynamic_rules_of_a_job_compare_with_its_own_earlier_runs(kit, glue, server):
    bucket = unique("dqdyn").replace("_", "-")
    _put(server, bucket, "in/orders.csv", CSV)
    job = kit.job(DYNAMIC)
    other = kit.job(DYNAMIC)          # another job, same evaluation context: not its history
    args = {"--source": f"s3://{bucket}/in/"}
    for name in (other, other):
        assert kit.run(name, timeout=60, Arguments=args)["JobRunState"] == "SUCCEEDED"

    logs = server.client("logs")

    def outcomes(run):
        text = "\n".join(log_messages(logs, "/aws-glue/jobs/output", run["Id"]))
        return [line.split(" ", 1)[1] for line in text.splitlines() if line.startswith("OUTCOME ")]
    first = kit.run(job, timeout=60, Arguments=args)
    assert first["JobRunState"] == "SUCCEEDED", first.get("ErrorMessage")
    # no history of its own yet: the other job's results do not count
    assert outcomes(first) == ["RowCount = last(1) Error", "RowCount >= avg(last(3)) Error"]
    second = kit.run(job, timeout=60, Arguments=args)
    assert outcomes(second) == ["RowCount = last(1) Passed", "RowCount >= avg(last(3)) Passed"]

