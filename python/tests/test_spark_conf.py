"""openglue_runtime.engines.spark.conf.session_conf / py_files_archive: the settings a Spark run gets (pure
Python, no JVM; tests/test_spark_settings.py starts real Spark with them)."""
import os
import zipfile

import pytest

from openglue_runtime.engines.spark.conf import (Machine, parse_conf_argument, py_files_archive,
                                                 session_conf, spark_environment, spark_jars,
                                                 spark_jdbc)

BIG = Machine(cpus=64, memory_mb=512 * 1024)


@pytest.fixture
def env(tmp_path):
    jars = tmp_path / "jars"
    jars.mkdir()
    for name in ("hadoop-aws-3.3.4.jar", "postgresql-42.7.8.jar", "README.txt"):
        (jars / name).write_text("x")
    (tmp_path / "run").mkdir()
    (tmp_path / "tmp").mkdir()
    return {
        "OPENGLUE_SPARK_JARS_DIR": str(jars),
        "OPENGLUE_RUN_DIR": str(tmp_path / "run"),
        "TMPDIR": str(tmp_path / "tmp"),
        "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:7070",
        "AWS_ACCESS_KEY_ID": "OGRUNKEY",
        "AWS_SECRET_ACCESS_KEY": "secret",
        "AWS_REGION": "eu-west-1",
    }


def test_master_from_argument_then_environment_then_local(env):
    assert session_conf({}, env, machine=BIG)["spark.master"] == "local[*]"
    env["OPENGLUE_SPARK_MASTER"] = "local[2]"
    assert session_conf({}, env, machine=BIG)["spark.master"] == "local[2]"
    conf = session_conf({"--spark-master": "local[3]"}, env, machine=BIG)
    assert conf["spark.master"] == "local[3]"
    assert "spark.submit.pyFiles" not in conf  # local mode imports awsglue from the driver's path
    assert conf["spark.driver.bindAddress"] == conf["spark.driver.host"] == "127.0.0.1"


def test_driver_listens_on_loopback_only_when_spark_runs_here(env):
    for master in ("spark://127.0.0.1:7077", "spark://localhost:7077,localhost:7078"):
        assert session_conf({"--spark-master": master}, env)["spark.driver.host"] == "127.0.0.1"
    for master in ("spark://10.1.2.3:7077", "yarn", "k8s://https://10.0.0.1:6443"):
        conf = session_conf({"--spark-master": master}, env)
        assert "spark.driver.host" not in conf and "spark.driver.bindAddress" not in conf


def test_app_name_is_the_job_name(env):
    assert session_conf({"--JOB_NAME": "nightly"}, env)["spark.app.name"] == "nightly"
    env["OPENGLUE_JOB_NAME"] = "from-env"
    assert session_conf({}, env)["spark.app.name"] == "from-env"


def test_jars_are_the_jar_files_of_the_jars_folder(env):
    conf = session_conf({}, env)
    folder = env["OPENGLUE_SPARK_JARS_DIR"]
    assert conf["spark.jars"] == f"local:{folder}/hadoop-aws-3.3.4.jar,local:{folder}/postgresql-42.7.8.jar"
    conf = session_conf({"--spark-master": "spark://127.0.0.1:7077"}, env)
    assert conf["spark.jars"] == f"{folder}/hadoop-aws-3.3.4.jar,{folder}/postgresql-42.7.8.jar"  # shipped
    env["OPENGLUE_SPARK_JARS_DIR"] = folder + "/missing"
    assert spark_jars(env) == []
    assert "spark.jars" not in session_conf({}, env)


def test_s3a_reaches_the_run_endpoint_with_the_run_keys(env):
    conf = session_conf({}, env)
    h = "spark.hadoop.fs."
    assert conf[h + "s3a.endpoint"] == "http://127.0.0.1:7070"
    assert conf[h + "s3a.path.style.access"] == "true"
    assert conf[h + "s3a.connection.ssl.enabled"] == "false"
    assert conf[h + "s3a.access.key"] == "OGRUNKEY"
    assert conf[h + "s3a.secret.key"] == "secret"
    assert conf[h + "s3a.endpoint.region"] == "eu-west-1"
    assert conf[h + "s3a.aws.credentials.provider"].endswith("SimpleAWSCredentialsProvider")
    assert conf[h + "s3a.directory.marker.retention"] == "keep"
    assert "spark.hadoop.fs.s3a.session.token" not in conf
    for scheme in ("s3", "s3n", "s3a"):
        assert conf[f"{h}{scheme}.impl"] == "org.apache.hadoop.fs.s3a.S3AFileSystem"


def test_s3a_session_token_and_https_endpoint(env):
    env["AWS_SESSION_TOKEN"] = "tok"
    env["AWS_ENDPOINT_URL_S3"] = "https://s3.example.test"
    conf = session_conf({}, env)
    assert conf["spark.hadoop.fs.s3a.session.token"] == "tok"
    assert conf["spark.hadoop.fs.s3a.aws.credentials.provider"].endswith("TemporaryAWSCredentialsProvider")
    assert conf["spark.hadoop.fs.s3a.connection.ssl.enabled"] == "true"


def test_no_endpoint_leaves_s3a_on_its_defaults(env):
    del env["AWS_ENDPOINT_URL_S3"]
    conf = session_conf({}, env)
    assert "spark.hadoop.fs.s3a.endpoint" not in conf
    assert "spark.hadoop.fs.s3a.path.style.access" not in conf
    assert "spark.hadoop.fs.s3a.directory.marker.retention" not in conf
    assert conf["spark.hadoop.fs.s3.impl"].endswith("S3AFileSystem")


def test_scratch_space_is_under_tmpdir(env):
    conf = session_conf({}, env)
    assert conf["spark.hadoop.hadoop.tmp.dir"].startswith(env["TMPDIR"] + "/")
    # Spark's own scratch space is the engine set-up's (openglue_runtime.engines.spark.engine.run_settings), with
    # user.home in the same JVM options: session_conf leaves both unset.
    assert "spark.local.dir" not in conf and "spark.driver.extraJavaOptions" not in conf
    assert conf["spark.hadoop.fs.s3a.buffer.dir"].startswith(env["TMPDIR"] + "/")


def test_spark_ui_keeps_event_logs_under_the_run_dir(env):
    assert "spark.eventLog.enabled" not in session_conf({"--enable-spark-ui": "false"}, env)
    conf = session_conf({"--enable-spark-ui": "true"}, env)
    folder = os.path.join(env["OPENGLUE_RUN_DIR"], "spark-events")
    assert conf["spark.eventLog.enabled"] == "true"
    assert conf["spark.eventLog.dir"] == "file://" + folder
    assert os.path.isdir(folder)  # Spark does not start when the folder is missing
    conf = session_conf({"--enable-spark-ui": "true", "--spark-event-logs-path": "s3://logs/app/"}, env)
    assert conf["spark.eventLog.dir"] == "s3a://logs/app/"


def test_glue_datacatalog_uses_the_metastore_only_when_it_is_on(env):
    assert "spark.sql.catalogImplementation" not in session_conf({"--enable-glue-datacatalog": "true"}, env)
    env["OPENGLUE_HMS_URI"] = "thrift://127.0.0.1:9083"
    assert "spark.sql.catalogImplementation" not in session_conf({}, env)
    for value in ("true", ""):  # Glue's console sets the flag with an empty value
        conf = session_conf({"--enable-glue-datacatalog": value}, env)
        assert conf["spark.sql.catalogImplementation"] == "hive"
        assert conf["spark.hadoop.hive.metastore.uris"] == "thrift://127.0.0.1:9083"
    assert "spark.sql.catalogImplementation" not in session_conf({"--enable-glue-datacatalog": "false"}, env)
    # The warehouse is the data folder's, where the metastore places databases without a
    # location (only with the metastore on).
    env["OPENGLUE_S3_ROOT"] = "/srv/openglue/s3"
    conf = session_conf({"--enable-glue-datacatalog": "true"}, env)
    assert conf["spark.sql.warehouse.dir"] == "file:/srv/openglue/warehouse"
    assert "spark.sql.warehouse.dir" not in session_conf({}, env)


def test_worker_type_in_local_mode_sizes_the_driver(env):
    env.update(OPENGLUE_WORKER_TYPE="G.1X", OPENGLUE_NUMBER_OF_WORKERS="3")
    # 2 executors of 4 vCPU / 10 GB: local[8] with a 20 GB heap on a big machine...
    conf = session_conf({}, env, machine=BIG)
    assert conf["spark.master"] == "local[8]"
    assert conf["spark.driver.memory"] == "20480m"
    assert "spark.executor.instances" not in conf
    # ...capped by the machine's CPUs and half its memory on a small one.
    conf = session_conf({}, env, machine=Machine(cpus=2, memory_mb=8192))
    assert conf["spark.master"] == "local[2]"
    assert conf["spark.driver.memory"] == "4096m"
    conf = session_conf({}, env, machine=Machine(cpus=16, memory_mb=2048))
    assert conf["spark.driver.memory"] == "1024m"
    assert conf["spark.master"] == "local[2]"  # 512 MB per task slot at least
    # An explicit local[N] is kept.
    assert session_conf({"--spark-master": "local[1]"}, env, machine=BIG)["spark.master"] == "local[1]"


def test_worker_type_on_a_cluster_sizes_the_executors(env):
    env.update(OPENGLUE_WORKER_TYPE="G.2X", OPENGLUE_NUMBER_OF_WORKERS="5",
               OPENGLUE_SPARK_MASTER="spark://10.0.0.1:7077")
    conf = session_conf({}, env, machine=BIG)
    assert conf["spark.master"] == "spark://10.0.0.1:7077"
    assert conf["spark.executor.cores"] == "8"
    assert conf["spark.executor.memory"] == "20480m"
    assert conf["spark.executor.instances"] == "4"
    assert conf["spark.cores.max"] == "32"
    env.update(OPENGLUE_WORKER_TYPE="Standard", OPENGLUE_NUMBER_OF_WORKERS="2")
    conf = session_conf({}, env, machine=BIG)
    assert (conf["spark.executor.cores"], conf["spark.executor.instances"]) == ("2", "2")
    assert conf["spark.executor.memory"] == "5120m"


def test_unknown_or_missing_worker_type_keeps_spark_defaults(env):
    for worker_type in ("", "Z.9X"):
        env["OPENGLUE_WORKER_TYPE"] = worker_type
        conf = session_conf({}, env, machine=BIG)
        assert conf["spark.master"] == "local[*]"
        assert "spark.driver.memory" not in conf and "spark.executor.cores" not in conf


def test_glue_conf_argument_is_merged_last(env):
    value = ("spark.sql.shuffle.partitions=7 --conf spark.master=local[1]"
             " --conf spark.driver.extraJavaOptions=-Da=1 -Db=2")
    conf = session_conf({"--conf": value, "--enable-spark-ui": "true"}, env)
    assert conf["spark.sql.shuffle.partitions"] == "7"
    assert conf["spark.master"] == "local[1]"
    assert conf["spark.driver.extraJavaOptions"] == "-Da=1 -Db=2"
    conf = session_conf({"--conf": "spark.eventLog.enabled=false"}, env)
    assert conf["spark.eventLog.enabled"] == "false"
    assert parse_conf_argument("novalue --conf =x --conf a=b=c") == [("a", "b=c")]


def test_cluster_master_ships_the_awsglue_archive(env):
    conf = session_conf({"--spark-master": "spark://127.0.0.1:7077"}, env)
    archive = conf["spark.submit.pyFiles"]
    assert archive.startswith(os.path.join(env["TMPDIR"], "openglue-pyfiles") + "/")
    with zipfile.ZipFile(archive) as z:
        names = set(z.namelist())
    assert {"awsglue/__init__.py", "openglue_runtime/engines/spark/conf.py", "awsglue/transforms/__init__.py"} <= names
    assert not [n for n in names if n.endswith((".so", ".pyc")) or "__pycache__" in n]


def test_py_files_archive_is_cached(tmp_path):
    first = py_files_archive(str(tmp_path))
    mtime = os.stat(first).st_mtime_ns
    assert py_files_archive(str(tmp_path)) == first
    assert os.stat(first).st_mtime_ns == mtime
    assert [p.name for p in (tmp_path / "openglue-pyfiles").iterdir()] == [os.path.basename(first)]


def test_spark_jdbc_names_the_driver_of_each_database_kind():
    assert spark_jdbc("jdbc:postgresql://h:5432/db") == ("jdbc:postgresql://h:5432/db", "org.postgresql.Driver")
    assert spark_jdbc("jdbc:mysql://h:3306/db?x=1") == (
        "jdbc:mysql://h:3306/db?x=1&permitMysqlScheme=true", "org.mariadb.jdbc.Driver")
    assert spark_jdbc("jdbc:mariadb://h/db") == ("jdbc:mysql://h/db?permitMysqlScheme=true", "org.mariadb.jdbc.Driver")
    assert spark_jdbc("jdbc:mysql://h/db?permitMysqlScheme")[0] == "jdbc:mysql://h/db?permitMysqlScheme"
    for bad in ("jdbc:oracle:thin:@h:1521/x", "postgresql://h/db", "jdbc:"):
        with pytest.raises(ValueError):
            spark_jdbc(bad)


def test_cluster_master_also_ships_the_runs_extra_py_files(env, tmp_path):
    run_py = tmp_path / "run" / "py"
    run_py.mkdir()
    (run_py / "helpers.py").write_text("X = 1\n")
    (run_py / "notes.txt").write_text("")
    wheel = tmp_path / "lib-1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK")
    env["PYTHONPATH"] = os.pathsep.join(["/opt/runtime/python", str(run_py), str(wheel),
                                         str(tmp_path / "missing.zip")])
    files = session_conf({"--spark-master": "yarn"}, env)["spark.submit.pyFiles"].split(",")
    assert os.path.basename(files[0]).startswith("awsglue-")
    assert files[1:] == [str(run_py / "helpers.py"), str(wheel)]


def test_a_nameless_uid_gives_the_launchers_files_to_the_jvm_instead():
    from openglue_runtime.engines.spark.engine import defer_launcher_files
    settings = {"spark.jars": "/j/a.jar,file:/j/b.jar", "spark.submit.pyFiles": "/t/awsglue.zip,/t/x.py",
                "spark.files": "/t/data.txt", "spark.driver.extraClassPath": "/cp/c.jar",
                "spark.master": "spark://h:7077"}
    deferred = defer_launcher_files(settings)
    # The launcher sees none of the paths it would resolve through Hadoop's login ...
    assert set(deferred) == {"spark.jars", "spark.submit.pyFiles", "spark.files"}
    assert deferred["spark.jars"] == "/j/a.jar,file:/j/b.jar"
    # ... and does nothing less: the jars are on the driver's classpath, the py-files are
    # shipped to the executors with the files.
    assert settings["spark.driver.extraClassPath"] == "/cp/c.jar:/j/a.jar:/j/b.jar"
    assert deferred["spark.files"] == "/t/data.txt,/t/awsglue.zip,/t/x.py"
    assert deferred["spark.submit.pyFiles"] == "/t/awsglue.zip,/t/x.py"
    # Local mode's local: jars need nothing.
    local = {"spark.jars": "local:/j/a.jar", "spark.master": "local[2]"}
    assert defer_launcher_files(local) == {} and local == {"spark.jars": "local:/j/a.jar",
                                                          "spark.master": "local[2]"}


def test_spark_on_this_machine_does_not_need_the_host_name_to_resolve(env):
    # Spark resolves the host name when its configuration loads, unless SPARK_LOCAL_IP is set:
    # on loopback the runtime sets it (a minimal Debian may not resolve its own name).
    assert spark_environment(session_conf({}, env)) == {"SPARK_LOCAL_IP": "127.0.0.1"}
    assert spark_environment(session_conf({"--spark-master": "spark://127.0.0.1:7077"}, env)) == {
        "SPARK_LOCAL_IP": "127.0.0.1"}
    assert spark_environment(session_conf({"--spark-master": "spark://spark.example:7077"}, env)) == {}


def test_extra_jars_follow_the_projects_jars_and_user_jars_first_puts_them_ahead(env, tmp_path):
    from openglue_runtime.engines.spark.conf import extra_jars
    folder = env["OPENGLUE_SPARK_JARS_DIR"]
    mine = [str(tmp_path / "a.jar"), str(tmp_path / "b.jar")]
    env["OPENGLUE_EXTRA_JARS"] = ",".join(mine) + ","
    assert extra_jars(env) == mine
    conf = session_conf({}, env)
    assert conf["spark.jars"] == ",".join(
        [f"local:{folder}/hadoop-aws-3.3.4.jar", f"local:{folder}/postgresql-42.7.8.jar"]
        + ["local:" + j for j in mine])
    assert "spark.driver.extraClassPath" not in conf and "spark.executor.userClassPathFirst" not in conf
    conf = session_conf({"--user-jars-first": "true"}, env)
    assert conf["spark.driver.extraClassPath"] == os.pathsep.join(mine)
    assert conf["spark.driver.userClassPathFirst"] == conf["spark.executor.userClassPathFirst"] == "true"
    assert "spark.driver.extraClassPath" not in session_conf({"--user-jars-first": "false"}, env)
    # A cluster gets the paths, which the driver serves to the executors.
    conf = session_conf({"--spark-master": "spark://127.0.0.1:7077"}, env)
    assert conf["spark.jars"].endswith("," + ",".join(mine))


def test_auto_scaling_turns_on_dynamic_allocation_on_a_cluster_only(env):
    env.update(OPENGLUE_WORKER_TYPE="G.1X", OPENGLUE_NUMBER_OF_WORKERS="5")
    conf = session_conf({"--enable-auto-scaling": "true"}, env, machine=BIG)
    assert "spark.dynamicAllocation.enabled" not in conf  # local mode: nothing to scale
    conf = session_conf({"--enable-auto-scaling": "true", "--spark-master": "spark://10.0.0.1:7077"}, env)
    assert conf["spark.dynamicAllocation.enabled"] == "true"
    assert conf["spark.dynamicAllocation.shuffleTracking.enabled"] == "true"
    assert conf["spark.dynamicAllocation.maxExecutors"] == "4" and "spark.executor.instances" not in conf
    conf = session_conf({"--spark-master": "spark://10.0.0.1:7077"}, env)
    assert "spark.dynamicAllocation.enabled" not in conf and conf["spark.executor.instances"] == "4"
