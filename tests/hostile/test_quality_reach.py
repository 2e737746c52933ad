"""What a job run can do to data quality and to visual jobs' scripts (issue 21's surfaces reached
by job runs): a run's own credentials may publish its own results and read rulesets, nothing
more; a hostile visual job cannot make the server publish a file the run could not read."""
import json
import os

import pytest

from jobkit import JobKit, log_messages, unique
from test_run_credentials import ROOT_ONLY, probe

# Calls the extension operations with the run's own credentials (as the runtime does).
EXTENSION_PROBE = """
    import json, os, sys, time
    from openglue_runtime.bookmarks import BookmarkServiceError, signed_call
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    out = {}
    now = time.time()
    for label, op, body in [
            ("recommend_for_a_dq_run", "OpenGluePutDataQualityRecommendation",
             {"RunId": args["--dq-run"], "RecommendedRuleset": "Rules = [ RowCount > 0 ]"}),
            ("recommend_without_run", "OpenGluePutDataQualityRecommendation",
             {"RecommendedRuleset": "Rules = [ RowCount > 0 ]"}),
            ("publish_for_another_job", "OpenGluePublishDataQualityResult",
             {"JobName": args["--victim"], "Score": 1.0, "StartedOn": now, "CompletedOn": now,
              "RuleResults": []})]:
        try:
            signed_call(op, body)
            out[label] = "ok"
        except BookmarkServiceError as e:
            out[label] = str(e)
    with open(args["--out"] + ".tmp", "w") as f:
        json.dump(out, f)
    os.rename(args["--out"] + ".tmp", args["--out"])
"""


def test_a_run_cannot_administer_data_quality_or_speak_for_other_runs(server, glue, tmp_path):
    kit = JobKit(server, glue)
    try:
        kept = [unique("kept")]
        glue.create_data_quality_ruleset(Name=kept[0], Ruleset="Rules = [ RowCount > 0 ]")
        calls = [
            ["Create", "create_data_quality_ruleset", {"Name": unique("byjob"), "Ruleset": "Rules = [ RowCount > 0 ]"}],
            ["Delete", "delete_data_quality_ruleset", {"Name": kept[0]}],
            ["Update", "update_data_quality_ruleset", {"Name": kept[0], "Ruleset": "Rules = [ ]"}],
            ["StartEvaluation", "start_data_quality_ruleset_evaluation_run", {
                "DataSource": {"GlueTable": {"DatabaseName": "d", "TableName": "t"}},
                "Role": "local", "RulesetNames": [kept[0]]}],
            ["CancelEvaluation", "cancel_data_quality_ruleset_evaluation_run", {"RunId": "dqrun-x"}],
            ["ReservedJob", "create_job", {"Name": "openglue:data-quality-evaluation", "Role": "x",
                                           "Command": {"Name": "glueetl", "ScriptLocation": "s3://a/b.py"}}],
            ["List", "list_data_quality_rulesets", {}],
        ]
        results = probe(kit, glue, calls, tmp_path / "results.json")
        for action in ("Create", "Delete", "Update", "StartEvaluation", "CancelEvaluation", "ReservedJob"):
            assert results[action].startswith("AccessDeniedException: "), (action, results)
        assert results["List"] == "ok"
        assert glue.get_data_quality_ruleset(Name=kept[0])["Ruleset"] == "Rules = [ RowCount > 0 ]"

        victim = kit.job("print('victim')\n", command="pythonshell")
        job = kit.job(EXTENSION_PROBE, command="pythonshell")
        out = tmp_path / "ext.json"
        run = kit.run(job, timeout=60, Arguments={"--dq-run": "dqrun-" + "0" * 40,
                                                  "--victim": victim, "--out": str(out)})
        assert run["JobRunState"] == "SUCCEEDED", run
        got = json.loads(out.read_text())
        assert got["recommend_for_a_dq_run"].startswith("AccessDeniedException"), got
        assert got["recommend_without_run"] != "ok", got
        assert got["publish_for_another_job"].startswith("AccessDeniedException"), got
        assert glue.list_data_quality_results(Filter={"JobName": victim})["Results"] == []
    finally:
        kit.close()


@ROOT_ONLY
def test_a_visual_job_cannot_make_the_server_publish_a_file_it_could_not_read(server, glue, tmp_path):
    """CustomCode replaces the run's generated script with a symbolic link to a file only root
    reads; at the run's end the server copies the script to ScriptLocation without following
    links, so the secret never reaches the object store."""
    secret = tmp_path / "root-only.txt"
    secret.write_text("TOP-SECRET-VALUE\n")
    os.chmod(secret, 0o600)
    os.chmod(tmp_path, 0o755)
    raw, scripts = (unique(p).replace("_", "-") for p in ("raw", "scripts"))
    store = os.path.join(server.data_dir, "s3")
    os.makedirs(os.path.join(store, raw, "in"))
    os.makedirs(os.path.join(store, scripts))
    with open(os.path.join(store, raw, "in", "a.csv"), "w") as f:
        f.write("id\n1\n")
    code = (f"import os, sys\npath = sys.argv[0]\nos.remove(path)\n"
            f"os.symlink({str(secret)!r}, path)\nprint('SWAPPED', flush=True)\nreturn dfc")
    nodes = {"node-1": {"S3CsvSource": {"Name": "In", "Paths": [f"s3://{raw}/in/"],
                                        "Separator": "comma", "QuoteChar": "quote", "WithHeader": True}},
             "node-2": {"CustomCode": {"Name": "Evil", "Inputs": ["node-1"], "ClassName": "Evil",
                                       "Code": code}}}
    kit = JobKit(server, glue)
    try:
        name = unique("visual")
        glue.create_job(Name=name, Role="local", JobMode="VISUAL", GlueVersion="4.0",
                        Command={"Name": "glueetl", "ScriptLocation": f"s3://{scripts}/evil.py"},
                        CodeGenConfigurationNodes=nodes)
        kit.jobs.append(name)
        run = kit.run(name, timeout=120)
        # The attack ran: the CustomCode swapped the script for the link.
        output = log_messages(server.client("logs"), "/aws-glue/jobs/output", run["Id"])
        assert any("SWAPPED" in line for line in output), (run, output)
        for folder, _, files in os.walk(os.path.join(store, scripts)):
            for file in files:
                path = os.path.join(folder, file)
                assert not os.path.islink(path), path
                with open(path, "rb") as f:
                    assert b"TOP-SECRET-VALUE" not in f.read(), path
    finally:
        kit.close()
