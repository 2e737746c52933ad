"""Issue 9, test 12: `openglue bookmarks plan` predicts exactly the objects the next run reads;
`history` and `diff` show each run's reads; `show` shows the state; every subcommand has --help;
a wrong job name is a clear error with a non-zero exit status.

Everything goes through the real server: runs are started with StartJobRun, the bookmark moves
through the runtime's commit, and the tool is the `openglue` binary (`openglue bookmarks ...`),
which hands over to `python -m openglue_runtime.bookmark_tool`. Storage is the embedded store over its S3
API (objects put with boto3's s3 client) and a plain local folder.
"""
import json
import subprocess
import time
import uuid

import pytest

from conftest import BIN
from dbkit import pg  # noqa: F401
from jobkit import kit, unique  # noqa: F401
from test_s3_api import s3_server


@pytest.fixture(scope="module")
def server():
    """This module's server has the S3 API on a known port."""
    yield from s3_server("openglue-bmtool-")


# Reads every JSON object under --path with transformation_ctx "src" and writes the `name`
# field of the rows it got (one file holds one row named after the file) to --out.
READER = """
    import json
    import sys
    from awsglue.context import GlueContext
    from awsglue.job import Job
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext

    args = getResolvedOptions(sys.argv, ["JOB_NAME", "path", "out"])
    glue_context = GlueContext(SparkContext.getOrCreate())
    job = Job(glue_context)
    job.init(args["JOB_NAME"], args)
    frame = glue_context.create_dynamic_frame.from_options(
        "s3", {"paths": [args["path"]]}, "json", transformation_ctx="src")
    table = frame.to_arrow()
    names = sorted(table.column("name").to_pylist()) if "name" in table.column_names else []
    with open(args["out"], "w") as f:
        json.dump(names, f)
    job.commit()
"""


# Reads a PostgreSQL table through a Glue connection with transformation_ctx "pg_src" (keys: the
# primary key) and writes the ids it got to --out.
JDBC_READER = """
    import json
    import sys
    from awsglue.context import GlueContext
    from awsglue.job import Job
    from awsglue.utils import getResolvedOptions

    args = getResolvedOptions(sys.argv, ["JOB_NAME", "connection", "table", "out"])
    glue_context = GlueContext()
    job = Job(glue_context)
    job.init(args["JOB_NAME"], args)
    frame = glue_context.create_dynamic_frame.from_options(
        connection_type="postgresql",
        connection_options={"connectionName": args["connection"], "dbtable": args["table"]},
        transformation_ctx="pg_src")
    with open(args["out"], "w") as f:
        json.dump(sorted(r["id"] for r in frame.to_arrow().to_pylist()), f)
    job.commit()
"""


@pytest.fixture()
def tool(server, cli_env):
    """Runs `openglue bookmarks <args>` against the module's server; returns the CompletedProcess
    (with `.json` parsed when --json was given and the command succeeded)."""
    def run(*args, check=True):
        result = subprocess.run([BIN, "bookmarks", *args, "--endpoint-url", server.endpoint],
                                capture_output=True, text=True, env=cli_env, timeout=120)
        if check:
            assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
        result.json = (json.loads(result.stdout) if "--json" in args and result.returncode == 0
                       else None)
        return result
    return run


class Store:
    """Puts one-row JSON objects into either the embedded store (over the S3 API) or a local
    folder, and names them as the runtime does."""

    def __init__(self, kind, server, tmp_path):
        self.kind = kind
        self.server = server
        if kind == "s3":
            self.bucket = "bm-" + uuid.uuid4().hex[:10]
            server.s3().create_bucket(Bucket=self.bucket)
            self.path = f"s3://{self.bucket}/in/"
        else:
            self.folder = tmp_path / "in"
            self.folder.mkdir()
            self.path = str(self.folder) + "/"

    def put(self, name):
        body = json.dumps({"name": name}).encode() + b"\n"
        if self.kind == "s3":
            self.server.s3().put_object(Bucket=self.bucket, Key=f"in/{name}.json", Body=body)
        else:
            with open(self.folder / f"{name}.json", "wb") as f:
                f.write(body)

    def uri(self, name):
        return self.path + name + ".json"


def names(uris):
    """The object names (file names without .json) of listed uris, sorted."""
    return sorted(u.rsplit("/", 1)[-1][:-len(".json")] for u in uris)


def run_reader(kit, job, out):
    run = kit.run(job, timeout=120, Arguments={"--out": str(out)})
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    with open(out) as f:
        return run["Id"], json.load(f)


def plan_objects(tool, job, *extra):
    result = tool("plan", job, "--json", *extra)
    sources = result.json["Sources"]
    assert set(sources) == {"src"}, sources
    return sources["src"]


@pytest.mark.parametrize("kind", ["s3", "local"])
def test_plan_predicts_exactly_what_the_next_run_reads(kit, server, tool, tmp_path, kind):
    store = Store(kind, server, tmp_path)
    for name in ("a1", "a2", "a3"):
        store.put(name)
    job = kit.job(READER, DefaultArguments={"--job-bookmark-option": "job-bookmark-enable",
                                            "--path": store.path})
    s3_args = ("--data-dir", server.data_dir)

    run1, read1 = run_reader(kit, job, tmp_path / "run1.json")
    assert read1 == ["a1", "a2", "a3"]

    # Nothing new: the plan is empty, and so is the next run.
    assert plan_objects(tool, job, *s3_args)["objects"] == []

    # New objects arrive, and an old one is rewritten in place (a newer last-modified).
    time.sleep(1.1)  # the rewritten object's mtime must differ at the store's resolution
    for name in ("b1", "b2"):
        store.put(name)
    store.put("a2")
    predicted = plan_objects(tool, job, *s3_args)
    assert names(predicted["objects"]) == ["a2", "b1", "b2"]
    assert all(store.path.rstrip("/").split("://")[-1] in u for u in predicted["objects"])
    assert predicted["count"] == 3 and predicted["listed"] == 5

    run2, read2 = run_reader(kit, job, tmp_path / "run2.json")
    # The prediction is what the run then read, object for object.
    assert read2 == names(predicted["objects"])

    run3, read3 = run_reader(kit, job, tmp_path / "run3.json")
    assert read3 == []

    # history: one COMMIT per run, with what each read.
    history = tool("history", job, "--json").json["History"]
    commits = [h for h in history if h["Action"] == "COMMIT"]
    assert [h["RunId"] for h in commits] == [run1, run2, run3]
    assert [h["Reads"]["src"]["objects"] for h in commits] == [3, 3, 0]
    text = tool("history", job).stdout
    for run_id in (run1, run2, run3):
        assert run_id in text
    assert "src: 3 objects" in text and "src: 0 objects" in text

    # diff run1 -> run2: the source's state moved, and run2's reads are listed.
    diff = tool("diff", job, run1, run2, "--json").json
    assert diff["Contexts"]["src"]["change"] == "changed"
    assert [b["RunId"] for b in diff["Between"]] == [run2]
    assert diff["Between"][0]["Reads"]["src"]["objects"] == 3
    # run2 -> run3 read nothing new: the state only moves in its band bookkeeping, if at all.
    diff23 = tool("diff", job, run2, run3, "--json").json
    assert [b["RunId"] for b in diff23["Between"]] == [run3]
    assert diff23["Between"][0]["Reads"]["src"]["objects"] == 0
    assert "src" in tool("diff", job, run1, run2).stdout

    # show: counters and the run that set the state.
    shown = tool("show", job, "--json").json
    assert shown["Bookmark"]["RunId"] == run3 and shown["Bookmark"]["PreviousRunId"] == run2
    assert shown["Bookmark"]["Version"] == 3 and shown["Bookmark"]["Run"] == 3
    assert shown["Contexts"]["src"]["State"]["paths"] == [store.path]
    assert shown["Contexts"]["src"]["SetBy"]["RunId"] in (run2, run3)
    text = tool("show", job).stdout
    assert "src (s3)" in text and run3 in text and store.path in text


def test_plan_after_a_reset_reads_everything_again(kit, server, tool, tmp_path, glue):
    store = Store("s3", server, tmp_path)
    for name in ("x1", "x2"):
        store.put(name)
    job = kit.job(READER, DefaultArguments={"--job-bookmark-option": "job-bookmark-enable",
                                            "--path": store.path})
    run1, read1 = run_reader(kit, job, tmp_path / "run1.json")
    assert read1 == ["x1", "x2"]
    s3_args = ("--data-dir", server.data_dir)
    assert plan_objects(tool, job, *s3_args)["count"] == 0
    glue.reset_job_bookmark(JobName=job)
    # The reset emptied the state; the source is still known from the history.
    predicted = plan_objects(tool, job, *s3_args)
    assert predicted["in_current_state"] is False
    assert sorted(predicted["objects"]) == [store.uri("x1"), store.uri("x2")]
    _, read2 = run_reader(kit, job, tmp_path / "run2.json")
    assert read2 == names(predicted["objects"])
    history = tool("history", job, "--json").json["History"]
    assert [h["Action"] for h in history] == ["COMMIT", "RESET", "COMMIT"]
    assert "RESET" in tool("history", job).stdout


def test_plan_of_a_pause_window_is_what_the_paused_run_reads(kit, server, tool, tmp_path):
    store = Store("s3", server, tmp_path)
    job = kit.job(READER, DefaultArguments={"--job-bookmark-option": "job-bookmark-enable",
                                            "--path": store.path})
    runs = []
    for name in ("p1", "p2", "p3"):
        store.put(name)
        run_id, read = run_reader(kit, job, tmp_path / f"{name}.json")
        assert read == [name]
        runs.append(run_id)
    s3_args = ("--data-dir", server.data_dir)
    window = ("--bookmark-option", "pause", "--from", runs[0], "--to", runs[1])
    result = tool("plan", job, "--json", *s3_args, *window)
    assert result.json["Window"] == {"From": runs[0], "To": runs[1]}
    predicted = result.json["Sources"]["src"]
    assert names(predicted["objects"]) == ["p2"]
    assert "window --job-bookmark-from " + runs[0] in tool("plan", job, *s3_args, *window).stdout
    run = kit.run(job, timeout=120, Arguments={
        "--out": str(tmp_path / "paused.json"), "--job-bookmark-option": "job-bookmark-pause",
        "--job-bookmark-from": runs[0], "--job-bookmark-to": runs[1]})
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    with open(tmp_path / "paused.json") as f:
        assert json.load(f) == names(predicted["objects"])
    # Half a window is refused, as the runtime refuses it.
    half = tool("plan", job, *s3_args, "--bookmark-option", "pause", "--from", runs[0],
                check=False)
    assert half.returncode != 0 and "must be given together" in half.stderr


def test_plan_of_a_disabled_job_lists_everything(kit, server, tool, tmp_path):
    store = Store("s3", server, tmp_path)
    store.put("d1")
    job = kit.job(READER, DefaultArguments={"--job-bookmark-option": "job-bookmark-enable",
                                            "--path": store.path})
    run_reader(kit, job, tmp_path / "run1.json")
    s3_args = ("--data-dir", server.data_dir)
    assert plan_objects(tool, job, *s3_args)["count"] == 0
    everything = plan_objects(tool, job, *s3_args, "--bookmark-option", "disable")
    assert everything["objects"] == [store.uri("d1")]
    # Through the S3 API the listing works too, and the plan says its times are coarser.
    via_api = tool("plan", job, "--json", "--bookmark-option", "disable",
                   "--s3-endpoint-url", server.s3_endpoint).json
    assert via_api["Storage"] == {"s3_endpoint": server.s3_endpoint}
    assert via_api["Sources"]["src"]["objects"] == [store.uri("d1")]
    assert "whole seconds" in via_api["Warning"]


@pytest.mark.parametrize("command", ["show", "history", "diff", "plan"])
def test_every_subcommand_has_help(tool, command):
    result = subprocess.run([BIN, "bookmarks", command, "--help"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert f"usage: openglue bookmarks {command}" in result.stdout
    assert "--endpoint-url" in result.stdout and "--json" in result.stdout


def test_bookmarks_is_in_the_binarys_usage():
    top = subprocess.run([BIN, "--help"], capture_output=True, text=True, timeout=30)
    assert "openglue bookmarks" in top.stdout
    result = subprocess.run([BIN, "bookmarks", "--help"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0
    for command in ("show", "history", "diff", "plan"):
        assert command in result.stdout


@pytest.mark.parametrize("command", ["show", "history", "plan"])
def test_an_unknown_job_is_a_clear_error(tool, command):
    name = unique("no_such_job")
    result = tool(command, name, check=False)
    assert result.returncode == 1
    assert f"job '{name}' not found" in result.stderr
    assert "Traceback" not in result.stderr


def test_diff_of_an_unknown_run_is_a_clear_error(kit, server, tool, tmp_path):
    store = Store("s3", server, tmp_path)
    store.put("u1")
    job = kit.job(READER, DefaultArguments={"--job-bookmark-option": "job-bookmark-enable",
                                            "--path": store.path})
    run1, _ = run_reader(kit, job, tmp_path / "run1.json")
    result = tool("diff", job, run1, "jr_" + "0" * 64, check=False)
    assert result.returncode == 1
    assert "jr_" + "0" * 64 in result.stderr and "Traceback" not in result.stderr


def test_a_job_without_a_bookmark_says_so(kit, tool):
    job = kit.job("print('nothing')\n")
    text = tool("show", job).stdout
    assert "no bookmark" in text
    assert tool("show", job, "--json").json["Bookmark"] is None
    assert tool("history", job, "--json").json["History"] == []
    assert tool("plan", job, "--json").json["Sources"] == {}


def test_an_unreachable_server_is_a_clear_error(cli_env):
    result = subprocess.run([BIN, "bookmarks", "show", "j", "--endpoint-url",
                             "http://127.0.0.1:1"], capture_output=True, text=True,
                            env=cli_env, timeout=120)
    assert result.returncode == 1
    assert "cannot reach the server at http://127.0.0.1:1" in result.stderr


def test_plan_of_a_jdbc_source_counts_the_rows_above_the_mark(kit, glue, pg, tool, tmp_path):
    table = unique("events")
    pg.execute(f"CREATE TABLE {table} (id integer PRIMARY KEY, v varchar(10))")
    pg.execute(f"INSERT INTO {table} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    connection = unique("pgconn")
    glue.create_connection(ConnectionInput={
        "Name": connection, "ConnectionType": "JDBC", "ConnectionProperties": {
            "JDBC_CONNECTION_URL": pg.url, "USERNAME": pg.user, "PASSWORD": pg.password}})
    try:
        job = kit.job(JDBC_READER, DefaultArguments={
            "--job-bookmark-option": "job-bookmark-enable", "--connection": connection,
            "--table": table}, Connections={"Connections": [connection]})
        run1, read1 = run_reader(kit, job, tmp_path / "run1.json")
        assert read1 == [1, 2, 3]
        plan = tool("plan", job, "--json").json["Sources"]
        assert set(plan) == {"pg_src"}
        plan_jdbc = plan["pg_src"]
        assert plan_jdbc["type"] == "jdbc" and plan_jdbc["keys"] == ["id"]
        assert plan_jdbc["after"] == [3] and plan_jdbc["rows"] == 0
        pg.execute(f"INSERT INTO {table} VALUES (4, 'd'), (5, 'e')")
        plan_jdbc = tool("plan", job, "--json").json["Sources"]["pg_src"]
        assert plan_jdbc["rows"] == 2
        assert "[\"id\"] > [3]; 2 rows" in tool("plan", job).stdout
        run2, read2 = run_reader(kit, job, tmp_path / "run2.json")
        assert read2 == [4, 5] and len(read2) == plan_jdbc["rows"]
        # history shows the rows each run read and the mark it left.
        commits = tool("history", job, "--json").json["History"]
        assert [h["Reads"]["pg_src"]["rows"] for h in commits] == [3, 2]
        assert commits[-1]["State"]["pg_src"]["high"] == [5]
        # A pause window run1..run2 covers the rows above run1's mark up to run2's: 4 and 5,
        # not the newer 6.
        pg.execute(f"INSERT INTO {table} VALUES (6, 'f')")
        window = tool("plan", job, "--json", "--bookmark-option", "pause", "--from", run1,
                      "--to", run2).json["Sources"]["pg_src"]
        assert (window["after"], window["upto"], window["rows"]) == ([3], [5], 2)
        paused = kit.run(job, timeout=120, Arguments={
            "--out": str(tmp_path / "paused.json"), "--job-bookmark-option": "job-bookmark-pause",
            "--job-bookmark-from": run1, "--job-bookmark-to": run2})
        assert paused["JobRunState"] == "SUCCEEDED", paused.get("ErrorMessage")
        with open(tmp_path / "paused.json") as f:
            assert json.load(f) == [4, 5]
        # The password never appears in the tool's output.
        for command in (("show", job), ("history", job), ("plan", job, "--json")):
            assert pg.password not in tool(*command).stdout
    finally:
        glue.delete_connection(ConnectionName=connection)


# The same reader through the Data Catalog: from_catalog on a JSON table over the store.
CATALOG_READER = """
    import json
    import sys
    from awsglue.context import GlueContext
    from awsglue.job import Job
    from awsglue.utils import getResolvedOptions

    args = getResolvedOptions(sys.argv, ["JOB_NAME", "database", "out"])
    glue_context = GlueContext()
    job = Job(glue_context)
    job.init(args["JOB_NAME"], args)
    frame = glue_context.create_dynamic_frame.from_catalog(
        database=args["database"], table_name="events", transformation_ctx="src")
    table = frame.to_arrow()
    names = sorted(table.column("name").to_pylist()) if "name" in table.column_names else []
    with open(args["out"], "w") as f:
        json.dump(names, f)
    job.commit()
"""


def test_plan_of_a_catalog_source_resolves_the_table(kit, glue, server, tool, tmp_path):
    store = Store("s3", server, tmp_path)
    for name in ("k1", "k2"):
        store.put(name)
    database = unique("bmcat")
    glue.create_database(DatabaseInput={"Name": database})
    glue.create_table(DatabaseName=database, TableInput={
        "Name": "events", "Parameters": {"classification": "json"},
        "StorageDescriptor": {
            "Columns": [{"Name": "name", "Type": "string"}], "Location": store.path,
            "SerdeInfo": {"SerializationLibrary": "org.openx.data.jsonserde.JsonSerDe"}}})
    try:
        job = kit.job(CATALOG_READER, DefaultArguments={
            "--job-bookmark-option": "job-bookmark-enable", "--database": database})
        _, read1 = run_reader(kit, job, tmp_path / "run1.json")
        assert read1 == ["k1", "k2"]
        store.put("k3")
        predicted = plan_objects(tool, job, "--data-dir", server.data_dir)
        assert predicted["table"] == f"{database}.events"
        assert names(predicted["objects"]) == ["k3"]
        _, read2 = run_reader(kit, job, tmp_path / "run2.json")
        assert read2 == names(predicted["objects"])
    finally:
        glue.delete_table(DatabaseName=database, Name="events")
        glue.delete_database(Name=database)
