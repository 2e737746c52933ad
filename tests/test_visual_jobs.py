"""Glue Studio visual jobs (docs/visual-jobs.md): CreateJob/UpdateJob keep CodeGenConfigurationNodes
and JobMode and GetJob/GetJobs/BatchGetJobs return them as sent; a run of a visual job whose
script is missing generates a Studio-shaped script from the graph, writes it to ScriptLocation
(or Studio's default location) and runs it; a graph with a node OpenGlue cannot generate fails
the run, naming the node, before anything is read or written. The expected rows are computed
here from the input the test writes. One run goes to Spark (Join/SparkSQL/Union)."""
import csv
import io
import json
import os
import re
import uuid

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from jobkit import ERROR, kit, log_messages, unique  # noqa: F401
from test_s3_api import s3_server

SPARK_TIMEOUT = 240
ACCOUNT_ID = "000000000000"
REGION = "us-east-1"
GENERATED = "script generated from CodeGenConfigurationNodes"


@pytest.fixture(scope="module")
def server():
    """The S3 API on a known port: Spark runs read the store through it."""
    yield from s3_server("openglue-visual-")


def new_bucket(server, prefix):
    name = prefix + "-" + uuid.uuid4().hex[:8]
    server.s3().create_bucket(Bucket=name)
    return name


def store_path(server, bucket, *parts):
    return os.path.join(server.data_dir, "s3", bucket, *parts)


def error_log(server, run):
    return log_messages(server.client("logs"), ERROR, run["Id"])


def json_rows(folder):
    """Every JSON Lines record of every file under `folder`."""
    rows = []
    for base, _, files in os.walk(folder):
        for name in files:
            with open(os.path.join(base, name)) as f:
                rows.extend(json.loads(line) for line in f if line.strip())
    return rows


def visual_job(kit, glue, nodes, script_location=None, **kwargs):
    name = unique("visual")
    command = {"Name": "glueetl", "PythonVersion": "3"}
    if script_location:
        command["ScriptLocation"] = script_location
    glue.create_job(Name=name, Role="local", Command=command, JobMode="VISUAL",
                    GlueVersion="4.0", CodeGenConfigurationNodes=nodes, **kwargs)
    kit.jobs.append(name)
    return name


ORDERS = [  # id, name, amount, day, note
    ("1", "ann", "1.50", "2024-03-01", "a"),
    ("2", "bob", "2.50", "2024-03-01", "b"),
    ("3", "zed", "9.00", "2024-03-02", "c"),
    ("4", "cy", "3.25", "2024-03-02", "d"),
    ("5", "dee", "7.00", "2024-03-03", "e"),
    ("6", "zoe", "0.50", "2024-03-03", "f"),
    ("7", "eve", "2.00", "2024-03-03", "g"),
]


def orders_csv():
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "name", "amount", "day", "note"])
    writer.writerows(ORDERS)
    return out.getvalue().encode()


def csv_source(path, name="Amazon S3"):
    return {"S3CsvSource": {"Name": name, "Paths": [path], "Separator": "comma",
                            "QuoteChar": "quote", "WithHeader": True, "Recurse": True}}


def test_a_visual_job_is_kept_as_sent_and_its_generated_script_writes_the_filtered_rows(
        kit, glue, server):
    raw, out, scripts = (new_bucket(server, p) for p in ("raw", "out", "scripts"))
    server.s3().put_object(Bucket=raw, Key="orders/part-1.csv", Body=orders_csv())
    nodes = {
        "node-1": csv_source(f"s3://{raw}/orders/"),
        "node-2": {"ApplyMapping": {"Name": "Change Schema", "Inputs": ["node-1"], "Mapping": [
            {"ToKey": "id", "FromPath": ["id"], "FromType": "string", "ToType": "int",
             "Dropped": False},
            {"ToKey": "customer", "FromPath": ["name"], "FromType": "string", "ToType": "string",
             "Dropped": False},
            {"ToKey": "amount", "FromPath": ["amount"], "FromType": "string", "ToType": "double",
             "Dropped": False},
            {"ToKey": "day", "FromPath": ["day"], "FromType": "string", "ToType": "string",
             "Dropped": False},
            {"ToKey": "note", "FromPath": ["note"], "FromType": "string", "ToType": "string",
             "Dropped": True}]}},
        "node-3": {"Filter": {"Name": "Filter", "Inputs": ["node-2"], "LogicalOperator": "AND",
                              "Filters": [
            {"Operation": "GT", "Negated": False, "Values": [
                {"Type": "COLUMNEXTRACTED", "Value": ["amount"]},
                {"Type": "CONSTANT", "Value": ["2"]}]},
            {"Operation": "REGEX", "Negated": True, "Values": [
                {"Type": "COLUMNEXTRACTED", "Value": ["customer"]},
                {"Type": "CONSTANT", "Value": ["^z"]}]}]}},
        "node-10": {"S3DirectTarget": {"Name": "Curated orders", "Inputs": ["node-3"],
                                       "Path": f"s3://{out}/orders/", "Format": "parquet",
                                       "Compression": "snappy", "PartitionKeys": [["day"]],
                                       "SchemaChangePolicy": {"EnableUpdateCatalog": False}}},
    }
    location = f"s3://{scripts}/scripts/curated-orders.py"
    job = visual_job(kit, glue, nodes, location, Description="orders, the visual way")

    got = glue.get_job(JobName=job)["Job"]
    assert got["CodeGenConfigurationNodes"] == nodes
    assert got["JobMode"] == "VISUAL"
    assert got["Command"]["ScriptLocation"] == location
    listed = [j for j in glue.get_jobs()["Jobs"] if j["Name"] == job]
    assert [j["CodeGenConfigurationNodes"] for j in listed] == [nodes]
    batch = glue.batch_get_jobs(JobNames=[job])["Jobs"]
    assert [j["CodeGenConfigurationNodes"] for j in batch] == [nodes]
    assert not os.path.exists(store_path(server, scripts, "scripts", "curated-orders.py"))

    run = kit.run(job, timeout=120)
    errors = error_log(server, run)
    assert run["JobRunState"] == "SUCCEEDED", (run.get("ErrorMessage"), errors)
    assert run["JobMode"] == "VISUAL"
    assert any(f"{GENERATED} (4 nodes)" in line for line in errors), errors
    # Glue's API only: the embedded engine runs it.
    assert any(line.startswith("[openglue] engine: embedded") for line in errors), errors

    expected = sorted((int(i), n, float(a), d) for i, n, a, d, _ in ORDERS
                      if float(a) > 2 and not re.match("^z", n))
    assert expected, "the filter keeps some rows"
    folder = store_path(server, out, "orders")
    assert sorted(os.listdir(folder)) == sorted({f"day={d}" for *_, d in expected})
    table = ds.dataset(folder, format="parquet", partitioning="hive").to_table()
    assert sorted(table.column_names) == ["amount", "customer", "day", "id"]  # note dropped
    rows = sorted((r["id"], r["customer"], r["amount"], str(r["day"])) for r in table.to_pylist())
    assert rows == expected

    script = server.s3().get_object(Bucket=scripts, Key="scripts/curated-orders.py")["Body"] \
        .read().decode()
    for line in ("import sys", "from awsglue.transforms import *", "job.init(args['JOB_NAME'], args)",
                 "# Script generated for node Amazon S3", "# Script generated for node Change Schema",
                 "# Script generated for node Filter", "# Script generated for node Curated orders",
                 "AmazonS3_node1 = glueContext.create_dynamic_frame.from_options(",
                 "Filter_node3 = Filter.apply(frame=ChangeSchema_node2, f=lambda row: ",
                 "Curatedorders_node10 = glueContext.write_dynamic_frame.from_options("
                 "frame=Filter_node3"):
        assert line in script, (line, script)
    assert script.rstrip().endswith("job.commit()")
    # Topological order: each node's block after the blocks of its inputs.
    positions = [script.index(f"# Script generated for node {n}")
                 for n in ("Amazon S3", "Change Schema", "Filter", "Curated orders")]
    assert positions == sorted(positions)

    # The next run finds the script and runs it as it is.
    again = kit.run(job, timeout=120)
    assert again["JobRunState"] == "SUCCEEDED", again.get("ErrorMessage")
    assert not any(GENERATED in line for line in error_log(server, again))


def test_join_sparksql_union_rename_and_drop_run_on_spark(kit, glue, server):
    raw, out = new_bucket(server, "raw"), new_bucket(server, "out")
    orders = [("1", "c1", "5.0"), ("2", "c2", "0.5"), ("3", "c1", "2.5"), ("4", "c3", "8.0"),
              ("5", "c9", "4.0")]
    customers = [{"cid": "c1", "cname": "Ann"}, {"cid": "c2", "cname": "Bob"},
                 {"cid": "c3", "cname": "Cy"}]
    old = [(100, "Old Ann", 1.25), (101, "Old Bob", 3.5)]
    s3 = server.s3()
    s3.put_object(Bucket=raw, Key="orders/o.csv", Body=(
        "id,cust,amount\n" + "".join(",".join(r) + "\n" for r in orders)).encode())
    s3.put_object(Bucket=raw, Key="customers/c.json",
                  Body="".join(json.dumps(c) + "\n" for c in customers).encode())
    buffer = io.BytesIO()
    pq.write_table(pa.table({"id": [r[0] for r in old], "customer": [r[1] for r in old],
                             "amount": [r[2] for r in old]}), buffer)
    s3.put_object(Bucket=raw, Key="old/old.parquet", Body=buffer.getvalue())
    nodes = {
        "node-1": csv_source(f"s3://{raw}/orders/", "Orders"),
        "node-2": {"S3JsonSource": {"Name": "Customers", "Paths": [f"s3://{raw}/customers/"],
                                    "Recurse": True}},
        "node-3": {"Join": {"Name": "Join", "Inputs": ["node-1", "node-2"], "JoinType": "equijoin",
                            "Columns": [{"From": "node-1", "Keys": [["cust"]]},
                                        {"From": "node-2", "Keys": [["cid"]]}]}},
        "node-4": {"RenameField": {"Name": "Rename Field", "Inputs": ["node-3"],
                                   "SourcePath": ["cname"], "TargetPath": ["customer"]}},
        "node-5": {"DropFields": {"Name": "Drop Fields", "Inputs": ["node-4"],
                                  "Paths": [["cid"], ["cust"]]}},
        "node-6": {"SparkSQL": {"Name": "SQL Query", "Inputs": ["node-5"], "SqlQuery":
                                "select cast(id as bigint) id, customer, cast(amount as double) amount "
                                "from myorders where cast(amount as double) > 1",
                                "SqlAliases": [{"From": "node-5", "Alias": "myorders"}]}},
        "node-7": {"S3ParquetSource": {"Name": "Old orders", "Paths": [f"s3://{raw}/old/"]}},
        "node-8": {"Union": {"Name": "Union", "Inputs": ["node-6", "node-7"], "UnionType": "ALL"}},
        "node-9": {"S3DirectTarget": {"Name": "Report", "Inputs": ["node-8"],
                                      "Path": f"s3://{out}/report/", "Format": "json"}},
    }
    job = visual_job(kit, glue, nodes)  # no ScriptLocation: Studio's default location
    run = kit.run(job, timeout=SPARK_TIMEOUT)
    errors = error_log(server, run)
    assert run["JobRunState"] == "SUCCEEDED", (run.get("ErrorMessage"), errors[-30:])
    assert any(f"{GENERATED} (9 nodes)" in line for line in errors), errors
    assert any(line.startswith("[openglue] engine: spark") for line in errors), errors

    names = {c["cid"]: c["cname"] for c in customers}
    expected = sorted([(int(i), names[c], float(a)) for i, c, a in orders
                       if c in names and float(a) > 1] + old)
    rows = sorted((r["id"], r["customer"], r["amount"]) for r in json_rows(store_path(server, out, "report")))
    assert rows == expected
    assert all(set(r) == {"id", "customer", "amount"} for r in json_rows(store_path(server, out, "report")))

    default = f"aws-glue-assets-{ACCOUNT_ID}-{REGION}"
    script = server.s3().get_object(Bucket=default, Key=f"scripts/{job}.py")["Body"].read().decode()
    for line in ("def sparkSqlQuery(glueContext, query, mapping, transformation_ctx) -> DynamicFrame:",
                 "Join_node3 = Join.apply(frame1=Orders_node1, frame2=Customers_node2, "
                 "keys1=[\"cust\"], keys2=[\"cid\"], transformation_ctx=\"Join_node3\")",
                 "RenameField_node4 = RenameField.apply(frame=Join_node3, old_name=\"cname\", "
                 "new_name=\"customer\"",
                 "DropFields_node5 = DropFields.apply(frame=RenameField_node4, paths=[\"cid\", \"cust\"]",
                 "SQLQuery_node6 = sparkSqlQuery(glueContext, query = SqlQuery0, "
                 "mapping = {\"myorders\": DropFields_node5}",
                 "Union_node8 = sparkUnion(glueContext, unionType = \"ALL\", "
                 "mapping = {\"source1\": SQLQuery_node6, \"source2\": Oldorders_node7}"):
        assert line in script, (line, script)


@pytest.mark.parametrize("node,named", [
    ({"FillMissingValues": {"Name": "Fill Missing Values", "Inputs": ["node-1"],
                            "ImputedPath": "amount"}},
     "unsupported visual node node-2 of type FillMissingValues"),
    ({"EvaluateDataQuality": {"Name": "Evaluate Data Quality", "Inputs": ["node-1"],
                              "Ruleset": "Rules = [ RowCount > ]"}},
     "visual node node-2 (EvaluateDataQuality \"Evaluate Data Quality\"): its Ruleset is not "
     "DQDL: line 1, column 22: expected a number"),
    ({"S3DirectTarget": {"Name": "Delta", "Inputs": ["node-1"], "Path": "s3://OUT/delta/",
                         "Format": "delta"}},
     "unsupported visual node node-2 of type S3DirectTarget with Format delta"),
])
def test_an_unsupported_node_fails_the_run_naming_it_and_writes_nothing(kit, glue, server, node, named):
    raw, out, scripts = (new_bucket(server, p) for p in ("raw", "out", "scripts"))
    server.s3().put_object(Bucket=raw, Key="orders/part-1.csv", Body=orders_csv())
    node = json.loads(json.dumps(node).replace("s3://OUT/", f"s3://{out}/"))
    nodes = {"node-1": csv_source(f"s3://{raw}/orders/"), "node-2": node,
             "node-3": {"S3DirectTarget": {"Name": "Out", "Inputs": ["node-1"],
                                           "Path": f"s3://{out}/orders/", "Format": "json"}}}
    job = visual_job(kit, glue, nodes, f"s3://{scripts}/scripts/bad.py")
    run = kit.run(job, timeout=120)
    assert run["JobRunState"] == "FAILED"
    assert named in run["ErrorMessage"], run["ErrorMessage"]
    # Nothing ran: no engine started, no output, no script written.
    assert not any(line.startswith("[openglue] engine:") for line in error_log(server, run))
    assert os.listdir(store_path(server, out)) == []
    assert os.listdir(store_path(server, scripts)) in ([], ["scripts"])
    assert not os.path.exists(store_path(server, scripts, "scripts", "bad.py"))


def test_update_job_replaces_the_nodes_and_the_next_script_comes_from_the_new_graph(kit, glue, server):
    raw, out = new_bucket(server, "raw"), new_bucket(server, "out")
    server.s3().put_object(Bucket=raw, Key="orders/part-1.csv", Body=orders_csv())
    first = {"node-1": csv_source(f"s3://{raw}/orders/"),
             "node-2": {"S3DirectTarget": {"Name": "All", "Inputs": ["node-1"],
                                           "Path": f"s3://{out}/all/", "Format": "csv"}}}
    job = visual_job(kit, glue, first)
    second = {"node-1": csv_source(f"s3://{raw}/orders/", "Orders"),
              "node-2": {"SelectFields": {"Name": "Select Fields", "Inputs": ["node-1"],
                                          "Paths": [["id"], ["name"]]}},
              "node-3": {"S3DirectTarget": {"Name": "Names", "Inputs": ["node-2"],
                                            "Path": f"s3://{out}/names/", "Format": "json"}}}
    update = {"Role": "local", "Command": {"Name": "glueetl"}, "JobMode": "VISUAL",
              "GlueVersion": "4.0", "CodeGenConfigurationNodes": second}
    glue.update_job(JobName=job, JobUpdate=update)
    got = glue.get_job(JobName=job)["Job"]
    assert got["CodeGenConfigurationNodes"] == second
    assert got["JobMode"] == "VISUAL"

    run = kit.run(job, timeout=120)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert not os.path.exists(store_path(server, out, "all"))  # the first graph is gone
    rows = sorted((int(r["id"]), r["name"]) for r in json_rows(store_path(server, out, "names")))
    assert rows == sorted((int(i), n) for i, n, *_ in ORDERS)
    assert all(set(r) == {"id", "name"} for r in json_rows(store_path(server, out, "names")))
    script = server.s3().get_object(Bucket=f"aws-glue-assets-{ACCOUNT_ID}-{REGION}",
                                    Key=f"scripts/{job}.py")["Body"].read().decode()
    assert "# Script generated for node Select Fields" in script
    assert "# Script generated for node All" not in script

    # An update without the graph removes it, as UpdateJob replaces the whole definition.
    glue.update_job(JobName=job, JobUpdate={"Role": "local", "Command": {
        "Name": "glueetl", "ScriptLocation": "s3://nowhere/x.py"}})
    got = glue.get_job(JobName=job)["Job"]
    assert "CodeGenConfigurationNodes" not in got
    assert got["JobMode"] == "SCRIPT"


@pytest.mark.parametrize("rule,state", [("RowCount = 7", "SUCCEEDED"), ("RowCount = 6", "FAILED")])
def test_a_data_quality_node_passes_the_rows_on_or_stops_the_job(kit, glue, server, rule, state):
    """An EvaluateDataQuality node with StopJobOnFailureOptions (Studio's "fail the job" choice):
    a passing ruleset lets the rows through to the target and publishes the result; a failing
    one fails the run with Glue's message before the target writes."""
    raw, out = new_bucket(server, "raw"), new_bucket(server, "out")
    server.s3().put_object(Bucket=raw, Key="orders/part-1.csv", Body=orders_csv())
    nodes = {"node-1": csv_source(f"s3://{raw}/orders/", "Orders"),
             "node-2": {"EvaluateDataQuality": {
                 "Name": "Evaluate Data Quality", "Inputs": ["node-1"],
                 "Ruleset": f'Rules = [ {rule}, IsComplete "id", ColumnValues "day" in ["2024-03-01", "2024-03-02", "2024-03-03"] ]',
                 "Output": "PrimaryInput",
                 "PublishingOptions": {"EvaluationContext": "dq_orders", "ResultsPublishingEnabled": True},
                 "StopJobOnFailureOptions": {"StopJobOnFailureTiming": "Immediate"}}},
             "node-3": {"S3DirectTarget": {"Name": "Out", "Inputs": ["node-2"],
                                           "Path": f"s3://{out}/orders/", "Format": "json"}}}
    job = visual_job(kit, glue, nodes)
    run = kit.run(job, timeout=120)
    assert run["JobRunState"] == state, run.get("ErrorMessage")
    results = glue.list_data_quality_results(Filter={"JobName": job})["Results"]
    assert len(results) == 1
    result = glue.get_data_quality_result(ResultId=results[0]["ResultId"])
    assert result["EvaluationContext"] == "dq_orders"
    outcome = {r["EvaluatedRule"]: r["Result"] for r in result["RuleResults"]}
    assert outcome[rule] == ("PASS" if state == "SUCCEEDED" else "FAIL")
    if state == "SUCCEEDED":
        rows = sorted(int(r["id"]) for r in json_rows(store_path(server, out, "orders")))
        assert rows == sorted(int(o[0]) for o in ORDERS)
    else:
        assert "The job failed due to failing DQ rules for node: EvaluateDataQuality_node2" in \
            run["ErrorMessage"]
        assert os.listdir(store_path(server, out)) == []
