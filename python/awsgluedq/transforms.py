"""`awsgluedq.transforms.EvaluateDataQuality`, the transform Glue Studio generates for data
quality nodes and for the default ruleset it evaluates before an S3 target:

    EvaluateDataQuality().process_rows(frame=dyf, ruleset=DEFAULT_DATA_QUALITY_RULESET,
        publishing_options={"dataQualityEvaluationContext": "EvaluateDataQuality_node1",
                            "enableDataQualityResultsPublishing": True},
        additional_options={"dataQualityResultsPublishing.strategy": "BEST_EFFORT",
                            "observations.scope": "ALL"})

`process_rows` returns a DynamicFrameCollection with the keys `ruleOutcomes`,
`rowLevelOutcomes` and `originalData`; `EvaluateDataQuality.apply(frame=..., ruleset=...)`
returns the rule outcomes frame (columns Rule, Outcome, FailureReason, EvaluatedMetrics). The
work is done by openglue_runtime.quality (see docs/data-quality.md).
"""
from typing import Any, Dict, Optional

from awsglue.dynamicframe import DynamicFrame, DynamicFrameCollection
from awsglue.transforms.transform import GlueTransform
from openglue_runtime.quality import frames as _frames

__all__ = ["EvaluateDataQuality"]


class EvaluateDataQuality(GlueTransform):
    """Evaluates a DQDL ruleset over a DynamicFrame."""

    DATA_QUALITY_RULE_OUTCOMES_KEY = "ruleOutcomes"
    DATA_QUALITY_ROW_LEVEL_OUTCOMES_KEY = "rowLevelOutcomes"
    DATA_QUALITY_ORIGINAL_DATA_KEY = "originalData"

    def __call__(self, frame: DynamicFrame, ruleset: str,
                 publishing_options: Optional[Dict[str, Any]] = None,
                 additional_options: Optional[Dict[str, Any]] = None,
                 additional_data_sources: Optional[Dict[str, DynamicFrame]] = None,
                 **kwargs) -> DynamicFrame:
        """The rule outcomes of `ruleset` over `frame` (one row per top-level rule)."""
        return _evaluate(frame, ruleset, publishing_options or {},
                                      additional_options or {}, additional_data_sources or {},
                                      row_level=False)[self.DATA_QUALITY_RULE_OUTCOMES_KEY]

    def process_rows(self, frame: DynamicFrame, ruleset: str,
                     publishing_options: Optional[Dict[str, Any]] = None,
                     additional_options: Optional[Dict[str, Any]] = None,
                     additional_data_sources: Optional[Dict[str, DynamicFrame]] = None,
                     **kwargs) -> DynamicFrameCollection:
        """The rule outcomes, the row-level outcomes (the rows with DataQualityRulesPass,
        DataQualityRulesFail, DataQualityRulesSkip and DataQualityEvaluationResult) and the
        original rows, as a DynamicFrameCollection."""
        return _evaluate(frame, ruleset, publishing_options or {},
                                      additional_options or {}, additional_data_sources or {},
                                      row_level=True)

    @classmethod
    def describeArgs(cls):
        return [{"name": "frame", "type": "DynamicFrame", "description": "the rows to evaluate", "optional": False, "defaultValue": None},
                {"name": "ruleset", "type": "String", "description": "a DQDL ruleset", "optional": False, "defaultValue": None},
                {"name": "publishing_options", "type": "Dict", "description": "dataQualityEvaluationContext, enableDataQualityResultsPublishing, ...", "optional": True, "defaultValue": "{}"},
                {"name": "additional_options", "type": "Dict", "description": "observations.scope, dataQualityResultsPublishing.strategy, ...", "optional": True, "defaultValue": "{}"}]

    @classmethod
    def describeReturn(cls):
        return {"type": "DynamicFrame", "description": "the rule outcomes (process_rows: a DynamicFrameCollection)"}

    @classmethod
    def describeTransform(cls):
        return "Evaluates a DQDL ruleset over a DynamicFrame (AWS Glue Data Quality)."


def _evaluate(frame, ruleset, publishing_options, additional_options, additional_data_sources,
              row_level: bool) -> DynamicFrameCollection:
    glue_ctx = frame.glue_ctx
    on_spark = hasattr(glue_ctx._engine, "from_spark")
    rows = (lambda f: f.toDF()) if on_spark else (lambda f: f.to_arrow())
    refs = {alias: rows(f) for alias, f in (additional_data_sources or {}).items()}
    result = _frames.evaluate_data(rows(frame), on_spark, ruleset, publishing_options,
                                   additional_options, refs, row_level)
    frames = {EvaluateDataQuality.DATA_QUALITY_RULE_OUTCOMES_KEY:
              DynamicFrame.from_arrow(result.rule_outcomes, glue_ctx, "ruleOutcomes")}
    if row_level:
        frames[EvaluateDataQuality.DATA_QUALITY_ROW_LEVEL_OUTCOMES_KEY] = (
            DynamicFrame.fromDF(result.row_level, glue_ctx, "rowLevelOutcomes") if on_spark
            else DynamicFrame.from_arrow(result.row_level, glue_ctx, "rowLevelOutcomes"))
        frames[EvaluateDataQuality.DATA_QUALITY_ORIGINAL_DATA_KEY] = frame
    return DynamicFrameCollection(frames, glue_ctx)
