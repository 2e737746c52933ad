"""`pip install ./python` into a fresh virtual environment, offline: awsglue and the pyspark
stand-in work there in-process, and a real pyspark is never shadowed.

The environment is made offline by tests/venvkit.py (the project environment's packages through a
.pth file, the package installed with --no-deps)."""
import glob
import os
import subprocess
import textwrap

import pytest

from venvkit import ROOT, bare_env, fresh_venv


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    # Without the project environment's real pyspark (the Spark engine's), so this is an
    # installation without one, where the stand-in is pyspark.
    return fresh_venv(tmp_path_factory.mktemp("install"), hide=("pyspark", "py4j"))


def run(python, body, cwd=None):
    return subprocess.run([python, "-c", textwrap.dedent(body)], capture_output=True, text=True,
                          timeout=120, env=bare_env(), cwd=cwd)


def test_installed_package_runs_a_glue_script_in_process(venv, tmp_path):
    python, purelib = venv
    result = run(python, """
        import importlib.metadata, json, os, sys
        import awsglue, openglue_runtime, pyspark
        from pyspark.context import SparkContext
        from pyspark.sql import SparkSession
        from pyspark.sql.functions import col
        from awsglue.utils import getResolvedOptions
        from awsglue.job import Job
        from openglue_runtime.storage import storage_options
        from openglue_runtime.catalog import hive_to_glue
        from openglue_runtime.engines.embedded.spark_api import SparkApiUnavailable
        args = getResolvedOptions(["x.py", "--JOB_NAME", "j", "--day=1"], ["JOB_NAME", "day"])
        sc = SparkContext.getOrCreate()
        spark = SparkSession.builder.getOrCreate()
        job = Job(None)
        job.init(args["JOB_NAME"], args)
        job.commit()
        try:
            spark.sql("select 1")
            failed = ""
        except SparkApiUnavailable as e:
            failed = str(e)
        print(json.dumps({
            "awsglue": os.path.dirname(awsglue.__file__),
            "runtime": os.path.dirname(openglue_runtime.__file__),
            "pyspark": pyspark.__file__, "standin": getattr(pyspark, "__openglue_standin__", False),
            "args": args, "storage": storage_options({"OPENGLUE_S3_ROOT": "/r"}),
            "type": hive_to_glue("bigint"), "failed": failed,
            "pyspark_python": os.environ.get("PYSPARK_PYTHON"),
            "requires_pandas": any(r.startswith("pandas") for r in
                                   importlib.metadata.requires("openglue-awsglue") or [])}))
    """, cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr
    import json
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert got["awsglue"] == os.path.join(purelib, "awsglue")
    assert got["runtime"] == os.path.join(purelib, "openglue_runtime")
    assert got["pyspark"] == os.path.join(purelib, "openglue_standin", "pyspark", "__init__.py")
    assert got["standin"] is True
    assert got["args"] == {"JOB_NAME": "j", "day": "1"}
    assert got["storage"] == {"s3_root": "/r"}
    assert got["type"] == "long"
    assert got["failed"].startswith("spark.sql() is Spark's API (pyspark)")
    assert os.path.exists(os.path.join(purelib, "openglue_standin.pth"))
    assert got["pyspark_python"] == python  # Spark's workers run the script's interpreter
    assert got["requires_pandas"]  # PySpark 3.5's mapInArrow (toDF on real Spark) needs it
    # The engine's binary is installed with the package when the build has made it.
    engine_dir = os.path.join("openglue_runtime", "engines", "embedded")
    built = glob.glob(os.path.join(ROOT, "python", engine_dir, "_engine*.so"))
    installed = glob.glob(os.path.join(purelib, engine_dir, "_engine*.so"))
    assert [os.path.basename(p) for p in installed] == [os.path.basename(p) for p in built]


def test_a_real_pyspark_wins_over_the_stand_in(venv, tmp_path):
    python, purelib = venv
    real = tmp_path / "real" / "pyspark"
    real.mkdir(parents=True)
    (real / "__init__.py").write_text("REAL = True\n")
    # A real pyspark anywhere on the path (here: installed beside, through a .pth) is the one
    # imported; the stand-in's finder comes last.
    pth = os.path.join(purelib, "aa_real_pyspark.pth")
    with open(pth, "w") as f:
        f.write(str(tmp_path / "real") + "\n")
    try:
        result = run(python, "import pyspark; print(pyspark.REAL, pyspark.__file__)")
    finally:
        os.unlink(pth)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", str(real / "__init__.py")]
