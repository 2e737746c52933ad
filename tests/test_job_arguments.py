"""Job arguments and job fields real Glue jobs set, through the real server (docs/jobs.md, "Job
arguments"; docs/engines.md, "Glue versions" and "Jars"): GlueVersion accepted, refused and
shown with the runtime that runs it; --extra-jars and --user-jars-first on a Spark run's JVM;
--TempDir and the flags OpenGlue accepts without acting on them."""
import json
import os
import platform
import zipfile

from conftest import raises_glue
from jobkit import ERROR, OUTPUT, kit, log_messages, unique  # noqa: F401
from test_job_python_modules import make_wheel, put_object

ACCEPTED = ("2.0", "3.0", "4.0", "5.0", "5.1")


def command(name="pythonshell"):
    return {"Name": name, "ScriptLocation": "s3://scripts/none.py"}


def test_glue_versions_2_0_to_5_1_are_accepted(glue, kit):
    for version in ACCEPTED:
        name = kit.job("print('x')", GlueVersion=version)
        assert glue.get_job(JobName=name)["Job"]["GlueVersion"] == version
    name = kit.job("print('x')")
    assert "GlueVersion" not in glue.get_job(JobName=name)["Job"]  # not given: not stored
    glue.update_job(JobName=name, JobUpdate={"Role": "local", "Command": command(), "GlueVersion": "5.0"})
    assert glue.get_job(JobName=name)["Job"]["GlueVersion"] == "5.0"


def test_ended_and_unknown_glue_versions_are_refused(glue, kit):
    for version in ("0.9", "1.0"):
        with raises_glue("InvalidInputException", f"GlueVersion {version} has reached end of life",
                         "2.0, 3.0, 4.0, 5.0 or 5.1"):
            glue.create_job(Name=unique("job"), Role="local", Command=command(), GlueVersion=version)
    with raises_glue("InvalidInputException", "GlueVersion 7.0 is not a Glue version OpenGlue runs"):
        glue.create_job(Name=unique("job"), Role="local", Command=command(), GlueVersion="7.0")
    name = kit.job("print('x')", GlueVersion="4.0")
    with raises_glue("InvalidInputException", "GlueVersion 1.0 has reached end of life"):
        glue.update_job(JobName=name, JobUpdate={"Role": "local", "Command": command(), "GlueVersion": "1.0"})
    assert glue.get_job(JobName=name)["Job"]["GlueVersion"] == "4.0"  # unchanged


def test_a_run_shows_its_glue_version_and_the_runtime_that_runs_it(kit, server):
    job = kit.job("print('ran')", command="glueetl", GlueVersion="4.0")
    run = kit.run(job)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert run["GlueVersion"] == "4.0"
    errors = log_messages(server.client("logs"), ERROR, run["Id"])
    assert errors[0].startswith("[openglue] runtime: GlueVersion 4.0 (AWS Glue 4.0: Spark 3.3.0, "
                                f"Python 3.10) runs on OpenGlue's runtime: Python {platform.python_version()}"), errors
    job = kit.job("print('ran')", command="pythonshell", GlueVersion="3.0")
    run = kit.run(job)
    assert run["GlueVersion"] == "3.0"
    assert log_messages(server.client("logs"), ERROR, run["Id"])[0] == (
        "[openglue] runtime: GlueVersion 3.0 (AWS Glue 3.0 Python shell: Python 3.9) runs on "
        f"OpenGlue's runtime: Python {platform.python_version()}")


def test_temp_dir_and_the_accepted_flags_reach_the_script(kit, server):
    # An embedded-engine run: --extra-jars is fetched (it must exist) and has no JVM to go to.
    os.makedirs(os.path.join(server.data_dir, "s3", "jars"), exist_ok=True)
    with zipfile.ZipFile(os.path.join(server.data_dir, "s3", "jars", "empty.jar"), "w") as z:
        z.writestr("x.txt", "x")
    job = kit.job("""
        import sys
        from awsglue.utils import getResolvedOptions
        names = ["TempDir", "enable-metrics", "enable-continuous-cloudwatch-log",
                 "enable-auto-scaling", "enable-job-insights", "enable-observability-metrics"]
        args = getResolvedOptions(sys.argv, names)
        print(repr([args[n] for n in names]))
    """, DefaultArguments={
        "--TempDir": "s3://tmp-bucket/glue-temp/", "--enable-metrics": "",
        "--enable-continuous-cloudwatch-log": "true", "--enable-auto-scaling": "true",
        "--enable-job-insights": "true", "--enable-observability-metrics": "true",
        "--engine": "embedded", "--extra-jars": "s3://jars/empty.jar", "--user-jars-first": "true"},
        command="glueetl")
    run = kit.run(job)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert log_messages(server.client("logs"), OUTPUT, run["Id"]) == [
        repr(["s3://tmp-bucket/glue-temp/", "", "true", "true", "true", "true"])]


def test_extra_jars_must_exist(kit):
    job = kit.job("print('never')", command="glueetl",
                  DefaultArguments={"--extra-jars": "s3://jars/missing.jar"})
    run = kit.run(job)
    assert run["JobRunState"] == "FAILED"
    assert run["ErrorMessage"].startswith("--extra-jars: cannot use s3://jars/missing.jar"), run


SPARK_CLASSPATH = """
    import json
    from awsglue.context import GlueContext
    from pyspark.context import SparkContext
    sc = SparkContext.getOrCreate()
    glue = GlueContext(sc)
    conf = sc.getConf()
    jvm = sc._jvm
    marker = jvm.org.apache.spark.util.Utils.getContextOrSparkClassLoader().getResource("og_marker_{tag}.txt")
    first = jvm.java.lang.ClassLoader.getSystemClassLoader().getResource("META-INF/LICENSE")
    # --additional-python-modules in Spark's Python workers: a UDF imports the set's module.
    from pyspark.sql.functions import udf
    value = udf(lambda _: __import__("og_mod_{tag}").VALUE)
    in_task = glue.spark_session.range(1).select(value("id")).first()[0]
    print(json.dumps({{"jars": conf.get("spark.jars"),
                      "driver_first": conf.get("spark.driver.userClassPathFirst", ""),
                      "executor_first": conf.get("spark.executor.userClassPathFirst", ""),
                      "marker": marker.toString() if marker else None,
                      "license": first.toString() if first else None,
                      "rows": glue.spark_session.range(3).count(), "in_task": in_task}}))
"""


def test_extra_jars_are_on_the_spark_classpath_and_user_jars_first_puts_them_ahead(kit, server, tmp_path):
    """One Spark run (a JVM costs seconds): --extra-jars, --user-jars-first, and an
    --additional-python-modules environment reaching Spark's Python workers."""
    tag = unique("j").split("_")[1]
    jar = tmp_path / f"og-{tag}.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr(f"og_marker_{tag}.txt", "mine\n")
        # A resource Spark's own jars have too: with --user-jars-first the JVM finds ours first.
        z.writestr("META-INF/LICENSE", f"og {tag}\n")
    key = f"{tag}/{jar.name}"
    os.makedirs(os.path.join(server.data_dir, "s3", "jars", tag))
    with open(os.path.join(server.data_dir, "s3", "jars", key), "wb") as f:
        f.write(jar.read_bytes())
    wheel = make_wheel(tmp_path, f"og_mod_{tag}", "1.0", 'VALUE = "from the layer"\n')
    module = put_object(server, "mods", f"{tag}/{wheel.name}", wheel)
    job = kit.job(SPARK_CLASSPATH.format(tag=tag), command="glueetl", DefaultArguments={
        "--engine": "spark", "--extra-jars": f"s3://jars/{key}", "--user-jars-first": "true",
        "--additional-python-modules": module})
    run = kit.run(job, timeout=240)
    assert run["JobRunState"] == "SUCCEEDED", (run.get("ErrorMessage"),
                                               log_messages(server.client("logs"), ERROR, run["Id"])[-20:])
    seen = json.loads(log_messages(server.client("logs"), OUTPUT, run["Id"])[-1])
    copy = os.path.join(server.data_dir, "runs", run["Id"], "jars", "1", jar.name)
    assert seen["jars"].split(",")[-1] == "local:" + copy
    assert seen["driver_first"] == seen["executor_first"] == "true"
    assert seen["marker"] == f"jar:file:{copy}!/og_marker_{tag}.txt"
    assert seen["license"] == f"jar:file:{copy}!/META-INF/LICENSE"
    assert seen["rows"] == 3
    assert seen["in_task"] == "from the layer"
