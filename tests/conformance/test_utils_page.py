"""The getResolvedOptions page (aws-glue-api-crawler-pyspark-extensions-get-resolved-options):
its example starts a job run with four arguments and prints two of them. Here that example runs
as a real job run on the server (StartJobRun with the page's Arguments; the page's two print
statements in Python 3 syntax), on each engine, and its output log is the page's two lines.

The page shows no output text; what it prints follows from its code: Python's print of a string
ending in a space and a value separates them by one more space."""
import pytest

from conformance_kit import engines
from jobkit import kit, log_messages  # noqa: F401  (the kit fixture)

SCRIPT = """
import sys
from awsglue.utils import getResolvedOptions

args = getResolvedOptions(sys.argv,
                          ['JOB_NAME',
                           'day_partition_key',
                           'hour_partition_key',
                           'day_partition_value',
                           'hour_partition_value'])
print("The day-partition key is: ", args['day_partition_key'])
print("and the day-partition value is: ", args['day_partition_value'])
"""


@pytest.fixture()
def logs(server):
    client = server.client("logs")
    yield client
    client.close()


@engines()
def test_get_resolved_options_retrieves_job_run_arguments(engine, kit, logs):
    """https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-crawler-pyspark-extensions-get-resolved-options.html
    "Example Retrieving arguments passed to a JobRun"."""
    job = kit.job(SCRIPT, name="my_test_Job_" + engine)
    run = kit.run(job, timeout=180, Arguments={
        "--day_partition_key": "partition_0",
        "--hour_partition_key": "partition_1",
        "--day_partition_value": "2024-06-01",
        "--hour_partition_value": "07",
        "--engine": engine})
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    out = [m.rstrip("\n") for m in log_messages(logs, "/aws-glue/jobs/output", run["Id"])]
    assert [m for m in out if not m.startswith("[openglue]")] == [
        "The day-partition key is:  partition_0",
        "and the day-partition value is:  2024-06-01"]
