"""What a job run gets: the environment (endpoints, run-scoped credentials, awsglue), the
engine choice (`--engine`), the pyspark stand-in on the embedded engine, Python shell jobs."""
import json
import os

from jobkit import ERROR, JobKit, kit, log_messages, unique  # noqa: F401


def test_pythonshell_job_talks_to_openglue_with_plain_boto3(kit, glue, tmp_path):
    db = unique("shell")
    out = tmp_path / "out.json"
    job = kit.job("""
        import importlib.util, json, os, sys
        import boto3
        from awsglue.utils import getResolvedOptions
        args = getResolvedOptions(sys.argv, ["db", "out"])
        client = boto3.client("glue")  # no endpoint, region or keys in the script
        client.create_database(DatabaseInput={"Name": args["db"]})
        names = [d["Name"] for d in client.get_databases()["DatabaseList"]]
        with open(args["out"], "w") as f:
            json.dump({"found": args["db"] in names, "engine": os.environ["OPENGLUE_ENGINE"],
                       "shims": "shims" in os.environ["PYTHONPATH"],
                       "key": os.environ["AWS_ACCESS_KEY_ID"][:5]}, f)
    """, command="pythonshell")
    run = kit.run(job, Arguments={"--db": db, "--out": str(out)})
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert json.loads(out.read_text()) == {"found": True, "engine": "pythonshell",
                                           "shims": False, "key": "OGRUN"}
    assert glue.get_database(Name=db)["Database"]["Name"] == db
    glue.delete_database(Name=db)


GLUE_SCRIPT = """
    import json, sys
    from pyspark.context import SparkContext
    from pyspark.sql import SparkSession
    from pyspark.sql.functions import col
    from awsglue.utils import getResolvedOptions
    from awsglue.job import Job
    from openglue_runtime import catalog
    args = getResolvedOptions(sys.argv, ["JOB_NAME", "db", "out", "use_spark"])
    sc = SparkContext.getOrCreate()
    spark = SparkSession.builder.getOrCreate()
    job = Job(None)
    job.init(args["JOB_NAME"], args)
    source = catalog.resolve_source(args["db"], "t", push_down_predicate="p = 'b'")
    with open(args["out"], "w") as f:
        json.dump({"paths": source.paths, "format": source.format}, f)
    if args["use_spark"] == "yes":
        spark.sql("SELECT 1").show()
    job.commit()
"""


def test_glueetl_on_the_embedded_engine(kit, glue, tmp_path, server):
    db = unique("emb")
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_table(DatabaseName=db, TableInput={
        "Name": "t", "PartitionKeys": [{"Name": "p", "Type": "string"}],
        "Parameters": {"classification": "parquet"},
        "StorageDescriptor": {"Location": "s3://d/t/"}})
    for value in ("a", "b"):
        glue.create_partition(DatabaseName=db, TableName="t",
                              PartitionInput={"Values": [value], "StorageDescriptor": {}})
    job = kit.job(GLUE_SCRIPT)
    logs = server.client("logs")
    try:
        out = tmp_path / "ok.json"
        run = kit.run(job, Arguments={"--db": db, "--out": str(out), "--use_spark": "no",
                                      "--engine": "embedded"})
        assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
        assert json.loads(out.read_text()) == {"paths": [["s3://d/t/p=b", {"p": "b"}]],
                                               "format": "parquet"}
        errors = log_messages(logs, ERROR, run["Id"])
        assert errors[0] == "[openglue] engine: embedded (--engine embedded)"
        outputs = log_messages(logs, "/aws-glue/jobs/output", run["Id"])
        assert any(m.startswith(f"[openglue] job.commit(): job {job} run {run['Id']} committed")
                   for m in outputs), outputs
        record_path = os.path.join(server.data_dir, "runs", run["Id"], "work", "openglue-job.json")
        record = json.load(open(record_path))
        assert (record["job_name"], record["run_id"]) == (job, run["Id"])

        # A Spark API use stops the run with the stand-in's message, not an ImportError.
        run = kit.run(job, Arguments={"--db": db, "--out": str(tmp_path / "no.json"),
                                      "--use_spark": "yes", "--engine": "embedded"})
        assert run["JobRunState"] == "FAILED"
        assert "SparkApiUnavailable: spark.sql() is Spark's API (pyspark); this run uses the " \
               "embedded engine" in run["ErrorMessage"]
        assert log_messages(logs, ERROR, run["Id"])[0] == \
            "[openglue] engine: embedded (--engine embedded)"
    finally:
        glue.delete_table(DatabaseName=db, Name="t")
        glue.delete_database(Name=db)


def test_engine_argument_is_checked_before_the_run_starts(kit, tmp_path):
    marker = tmp_path / "ran"
    body = f"open({str(marker)!r}, 'w').write('x')\n"
    job = kit.job(body, DefaultArguments={"--engine": "turbo"})
    run = kit.run(job)
    assert run["JobRunState"] == "FAILED"
    assert run["ErrorMessage"] == "--engine 'turbo' is not an engine: use auto, embedded or spark"
    assert not marker.exists()
    # The run's Arguments override the job's.
    run = kit.run(job, Arguments={"--engine": "Embedded"})
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert marker.exists()
    run = kit.run(job, Arguments={"--engine": "turbo"})
    assert run["JobRunState"] == "FAILED"
    assert run["ErrorMessage"] == "--engine 'turbo' is not an engine: use auto, embedded or spark"
