"""The process of a data-quality run (StartDataQualityRulesetEvaluationRun,
StartDataQualityRuleRecommendationRun): `python -m openglue_runtime.quality.run --spec <file>`,
started by the server as a module run of its job service (docs/data-quality.md, "Evaluation and
recommendation runs"), with the run's own credentials in its environment.

The spec (JSON, written by the server into the run's folder):
  {"Kind": "evaluation" | "recommendation", "RunId": "dqrun-...",
   "DataSource": {"GlueTable": {"DatabaseName", "TableName", "CatalogId"?, "AdditionalOptions"?}},
   "RulesetNames": [...], "AdditionalDataSources": {alias: DataSource},
   "AdditionalRunOptions": {"ResultsS3Prefix"?, ...}}

The table is read on the embedded engine as GlueContext.create_dynamic_frame.from_catalog reads
it (AdditionalOptions pushDownPredicate and catalogPartitionPredicate select partitions; the
reader's options, such as separator or withHeader, override the table's). An evaluation run fetches each ruleset (GetDataQualityRuleset),
evaluates it over the rows (DuckDB over the table's Arrow rows; dynamic rules compare with the
earlier results of the same ruleset on the same table) and publishes one result per
ruleset (OpenGluePublishDataQualityResult: RulesetName, EvaluationContext = the ruleset's name,
DataSource; the server adds RulesetEvaluationRunId). A recommendation run profiles the rows
(openglue_runtime.quality.recommend) and reports the ruleset
(OpenGluePutDataQualityRecommendation). Any failure ends the process with an error: the run
ends FAILED with that message.
"""
import argparse
import json
import sys
from typing import Any, Dict, List, Tuple

from openglue_runtime.quality import dqdl, evaluate as ev, frames


def _log(message: str) -> None:
    print(f"[openglue] data quality run: {message}", flush=True)


def _table(source: Dict[str, Any]) -> Dict[str, Any]:
    for member in ("GlueTable", "DataQualityGlueTable"):
        if source.get(member):
            return source[member]
    raise ValueError("the data source names no GlueTable")


def _read(source: Dict[str, Any]):
    """The rows of a DataSource's catalog table as a pyarrow Table, read on the embedded engine
    as GlueContext.create_dynamic_frame.from_catalog reads them (the machinery may not import
    the awsglue façade, so this is its table read without bookmarks)."""
    from openglue_runtime import catalog
    from openglue_runtime.engines.embedded import EmbeddedEngine
    table = _table(source)
    options = dict(table.get("AdditionalOptions") or {})
    try:
        src = catalog.resolve_source(
            table["DatabaseName"], table["TableName"],
            push_down_predicate=options.get("pushDownPredicate", "") or "",
            catalog_partition_predicate=options.get("catalogPartitionPredicate", "") or "",
            additional_options=options, catalog_id=table.get("CatalogId"))
    except catalog.JdbcCatalogTable:
        raise RuntimeError(f"{table['DatabaseName']}.{table['TableName']} is a JDBC table: data-quality "
                           "runs read tables of the object store only") from None
    engine = EmbeddedEngine()
    list_opts = {k: options[k] for k in ("recurse", "exclusions") if k in options}
    parts, listing = [], []
    for location, values in src.paths:
        files = engine.list_files([location], list_opts)
        listing.extend(files)
        parts.append(([u for u, _, _ in files], dict(values)))
    fmt_opts = dict(src.format_options or {})
    for k in ("separator", "quoteChar", "escaper", "withHeader", "skipFirst", "multiLine",
              "jsonPath", "compressionType"):
        if k in options:
            fmt_opts[k] = options[k]
    plan = engine.read_catalog(parts, listing, src.format, fmt_opts,
                               list(src.schema_columns), list(src.partition_keys))
    rows = engine.to_arrow(plan)
    _log(f"read {rows.num_rows} row(s) of {table['DatabaseName']}.{table['TableName']}")
    return rows


def _published_source(source: Dict[str, Any]) -> Dict[str, Any]:
    table = _table(source)
    return {"GlueTable": {k: table[k] for k in ("DatabaseName", "TableName", "CatalogId")
                          if table.get(k)}}


def _history(glue, source: Dict[str, Any], ruleset_name: str) -> Dict[str, List[float]]:
    """The earlier results of `ruleset_name` on the run's table (frames.history_of)."""
    return frames.history_of(glue, {"DataSource": _published_source(source)},
                             lambda r: r.get("RulesetName") == ruleset_name)


def evaluate_run(spec: Dict[str, Any]) -> None:
    import boto3
    from openglue_runtime.bookmarks import signed_call
    glue = boto3.client("glue")
    rulesets: Dict[str, Tuple[str, Any]] = {}
    for name in spec.get("RulesetNames") or []:
        text = glue.get_data_quality_ruleset(Name=name)["Ruleset"]
        try:
            rulesets[name] = (text, dqdl.parse(text))
        except dqdl.DQDLSyntaxError as e:
            raise RuntimeError(f"ruleset {name} is not valid DQDL: {e}") from None
    rows = _read(spec["DataSource"])
    refs = {alias: _read(other)
            for alias, other in (spec.get("AdditionalDataSources") or {}).items()}
    options = spec.get("AdditionalRunOptions") or {}
    for name, (text, parsed) in rulesets.items():
        backend = ev.DuckDBBackend(rows, refs)
        history = _history(glue, spec["DataSource"], name) if frames._uses_history(parsed) else {}
        evaluation, _ = ev.evaluate(backend, parsed, history=history)
        failed = [o for o in evaluation.outcomes if o.outcome != ev.PASSED]
        _log(f"{name}: {len(evaluation.outcomes)} rule(s) over {evaluation.row_count} row(s): "
             f"{len(evaluation.outcomes) - len(failed)} passed, {len(failed)} failed or errored "
             f"(score {evaluation.score:.2f})"
             + "".join(f"\n  {o.outcome}: {o.rule}: {o.failure_reason}" for o in failed))
        body = frames.result_body(name, text, evaluation)
        body.pop("JobName", None)
        body.pop("JobRunId", None)
        body["RulesetName"] = name
        body["DataSource"] = _published_source(spec["DataSource"])
        result_id = signed_call("OpenGluePublishDataQualityResult", body).get("ResultId")
        _log(f"{name}: result {result_id} published")
        if options.get("ResultsS3Prefix"):
            frames._write_results(options["ResultsS3Prefix"], name, evaluation, result_id)


def recommend_run(spec: Dict[str, Any]) -> None:
    from openglue_runtime.bookmarks import signed_call
    from openglue_runtime.quality.recommend import recommend
    rows = _read(spec["DataSource"])
    ruleset = recommend(ev.DuckDBBackend(rows, {}))
    signed_call("OpenGluePutDataQualityRecommendation", {"RecommendedRuleset": ruleset})
    _log(f"recommended {ruleset.count(chr(10)) - 1} rule(s)\n{ruleset}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="openglue_runtime.quality.run")
    parser.add_argument("--spec", required=True)
    args, _ = parser.parse_known_args(argv)
    with open(args.spec) as f:
        spec = json.load(f)
    _log(f"{spec.get('Kind')} run {spec.get('RunId')} of "
         f"{json.dumps(_published_source(spec['DataSource']))}")
    if spec.get("Kind") == "recommendation":
        recommend_run(spec)
    else:
        evaluate_run(spec)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
