"""The machinery behind awsgluedq.transforms.EvaluateDataQuality: evaluate a ruleset over a
frame's rows (a pyarrow Table on the embedded engine, a Spark DataFrame on the Spark engine),
build the rule-outcome rows and the row-level rows, log a summary and publish the result to the
server (OpenGluePublishDataQualityResult, signed by the job run's own credentials).

Publishing options (AWS's names): `dataQualityEvaluationContext` (the result's
EvaluationContext; default "default_context"), `enableDataQualityResultsPublishing` (default
True: publish when running as a job run of a server), `enableDataQualityCloudWatchMetrics`
(accepted; OpenGlue has no CloudWatch metrics), `resultsS3Prefix` (the results are also written
there as JSON lines). Additional options: `observations.scope`,
`dataQualityResultsPublishing.strategy` (BEST_EFFORT: a failed publish is logged, the job goes
on; otherwise it raises), `performanceTuning.caching`: accepted.
"""
import datetime as _dt
import json
import math
import os
import sys
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import pyarrow as pa

from openglue_runtime.quality import dqdl, evaluate as ev

__all__ = ["DataQualityResult", "evaluate_data", "RULE_OUTCOME_SCHEMA"]

RULE_OUTCOME_SCHEMA = pa.schema([("Rule", pa.string()), ("Outcome", pa.string()),
                                 ("FailureReason", pa.string()),
                                 ("EvaluatedMetrics", pa.map_(pa.string(), pa.float64()))])


@dataclass
class DataQualityResult:
    rule_outcomes: pa.Table           # one row per top-level rule
    row_level: Any                    # pa.Table or a Spark DataFrame (None unless asked)
    evaluation: ev.Evaluation
    result_id: Optional[str]


def _log(message: str) -> None:
    print(f"[openglue] data quality: {message}", flush=True)


def history_of(glue, result_filter: Dict[str, Any], keep) -> Dict[str, List[float]]:
    """Earlier published results matching `result_filter` (ListDataQualityResults' Filter; the
    100 newest at most) for which `keep(result)` holds, newest first, per rule text: each rule's
    first metric (what dynamic rules such as avg(last(3)) and DetectAnomalies compare with)."""
    ids, token = [], None
    while len(ids) < 100:
        kw = {"MaxResults": 100, **({"Filter": result_filter} if result_filter else {})}
        if token:
            kw["NextToken"] = token
        page = glue.list_data_quality_results(**kw)
        ids += [r["ResultId"] for r in page.get("Results", [])]
        token = page.get("NextToken")
        if not token:
            break
    results = glue.batch_get_data_quality_result(ResultIds=ids[:100]).get("Results", []) if ids else []
    results = [r for r in results if keep(r)]
    results.sort(key=lambda r: r.get("StartedOn") or 0, reverse=True)
    history: Dict[str, List[float]] = {}
    for r in results:
        for rr in r.get("RuleResults", []):
            metrics = rr.get("EvaluatedMetrics") or {}
            if metrics:
                rule = rr.get("EvaluatedRule") or rr.get("Description") or ""
                history.setdefault(rule, []).append(float(next(iter(metrics.values()))))
    return history


def _history(context: str) -> Dict[str, List[float]]:
    """This job's earlier results of the evaluation context `context` (history_of)."""
    if not os.environ.get("OPENGLUE_JOB_RUN_ID"):
        return {}
    try:
        import boto3
        job = _job_name()
        return history_of(boto3.client("glue"), {"JobName": job} if job else {},
                          lambda r: r.get("EvaluationContext", "default_context") == context)
    except Exception as e:  # no history is not an error: dynamic rules say so themselves
        _log(f"no history for dynamic rules ({type(e).__name__}: {str(e)[:200]})")
        return {}


def _job_name() -> Optional[str]:
    """The running job's name: Job.init's (run_state), else --JOB_NAME of the command line."""
    from openglue_runtime import run_state
    job = run_state.current_job()
    name = getattr(job, "name", None) if job is not None else None
    if name:
        return name
    argv = sys.argv
    for i, arg in enumerate(argv):
        if arg == "--JOB_NAME" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--JOB_NAME="):
            return arg.split("=", 1)[1]
    return None


def evaluate_data(data, on_spark: bool, ruleset: str, publishing_options: Dict[str, Any],
                  additional_options: Dict[str, Any], references: Dict[str, Any],
                  row_level: bool) -> DataQualityResult:
    """Evaluates `ruleset` over `data` (see the module docstring). Raises DQDLSyntaxError for a
    ruleset that is not DQDL (nothing is read then)."""
    parsed = dqdl.parse(ruleset)
    context = str(publishing_options.get("dataQualityEvaluationContext") or "default_context")
    history = _history(context) if _uses_history(parsed) else {}
    backend = (ev.SparkBackend(data, references) if on_spark else
               ev.DuckDBBackend(data, references))
    evaluation, row_rules = ev.evaluate(backend, parsed, history=history)
    outcomes = pa.table({
        "Rule": [o.rule for o in evaluation.outcomes],
        "Outcome": [o.outcome for o in evaluation.outcomes],
        "FailureReason": [o.failure_reason for o in evaluation.outcomes],
        "EvaluatedMetrics": [list(o.metrics.items()) for o in evaluation.outcomes],
    }, schema=RULE_OUTCOME_SCHEMA)
    rows = None
    if row_level:
        sql = ev.row_level_sql(backend, row_rules, backend.columns)
        rows = backend.select_table(sql)
    passed = sum(o.outcome == ev.PASSED for o in evaluation.outcomes)
    failed = [o for o in evaluation.outcomes if o.outcome != ev.PASSED]
    _log(f"{context}: {len(evaluation.outcomes)} rule(s) over {evaluation.row_count} row(s) on the "
         f"{'Spark' if on_spark else 'embedded'} engine: {passed} passed, {len(failed)} failed or "
         f"errored (score {evaluation.score:.2f})"
         + "".join(f"\n  {o.outcome}: {o.rule}: {o.failure_reason}" for o in failed))
    result_id = None
    if publishing_options.get("enableDataQualityResultsPublishing", True) and \
            os.environ.get("OPENGLUE_JOB_RUN_ID"):
        result_id = _publish(context, ruleset, evaluation, additional_options)
    prefix = publishing_options.get("resultsS3Prefix")
    if prefix:
        _write_results(prefix, context, evaluation, result_id)
    return DataQualityResult(outcomes, rows, evaluation, result_id)


def _uses_history(rs) -> bool:
    return any("last(" in top.text or getattr(top, "rule_type", "") == "DetectAnomalies"
               for top in rs.rules)


def _epoch(t: _dt.datetime) -> float:
    return t.timestamp()


def result_body(context: str, ruleset: str, evaluation: ev.Evaluation) -> Dict[str, Any]:
    """The OpenGluePublishDataQualityResult request for an evaluation."""
    rules = []
    for i, o in enumerate(evaluation.outcomes):
        # AWS names a result's rules Rule_1, Rule_2, ... and keeps the text in Description and
        # EvaluatedRule; metrics that are no number (NaN, infinity) are left out.
        item = {"Name": f"Rule_{i + 1}", "Description": o.rule[:2048], "EvaluatedRule": o.rule,
                "Result": o.result,
                "EvaluatedMetrics": {k: float(v) for k, v in o.metrics.items()
                                     if v is not None and math.isfinite(float(v))}}
        if o.failure_reason:
            item["EvaluationMessage"] = o.failure_reason
        if o.labels:
            item["Labels"] = dict(o.labels)
        rules.append(item)
    body = {"EvaluationContext": context, "Ruleset": ruleset, "Score": evaluation.score,
            "StartedOn": _epoch(evaluation.started), "CompletedOn": _epoch(evaluation.completed),
            "RuleResults": rules}
    if os.environ.get("OPENGLUE_JOB_RUN_ID"):
        body["JobRunId"] = os.environ["OPENGLUE_JOB_RUN_ID"]
    # JobName: the server records the calling run's own (a job run's credentials name it).
    if evaluation.analyzer_metrics:
        body["AnalyzerResults"] = [{"Name": k, "EvaluatedMetrics": {k: float(v)}}
                                   for k, v in evaluation.analyzer_metrics.items()]
    return body


def _publish(context, ruleset, evaluation, additional_options) -> Optional[str]:
    from openglue_runtime.bookmarks import BookmarkServiceError, signed_call
    strategy = str(additional_options.get("dataQualityResultsPublishing.strategy", "BEST_EFFORT"))
    try:
        out = signed_call("OpenGluePublishDataQualityResult",
                          result_body(context, ruleset, evaluation))
    except BookmarkServiceError as e:
        if strategy.upper() == "BEST_EFFORT":
            _log(f"the result was not published ({e}); BEST_EFFORT: the job goes on")
            return None
        raise RuntimeError(f"data quality: the result of {context} was not published: {e}") from None
    rid = out.get("ResultId")
    _log(f"{context}: result {rid} published")
    return rid


def _write_results(prefix: str, context: str, evaluation: ev.Evaluation, result_id) -> None:
    from openglue_runtime.engines.embedded import native
    lines = [json.dumps({"ResultId": result_id, "EvaluationContext": context,
                         "Rule": o.rule, "Outcome": o.outcome, "FailureReason": o.failure_reason,
                         "EvaluatedMetrics": o.metrics,
                         "StartedOn": evaluation.started.isoformat()}) for o in evaluation.outcomes]
    name = (f"{prefix.rstrip('/')}/{context}/"
            f"{evaluation.started.strftime('%Y%m%dT%H%M%S')}-{result_id or 'local'}.jsonl")
    try:
        native.write_bytes(name, ("\n".join(lines) + "\n").encode("utf-8"))
    except Exception as e:
        print(f"[openglue] data quality: could not write {name}: {e}", file=sys.stderr)
