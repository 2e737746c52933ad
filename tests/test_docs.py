"""The generated docs match the server they describe."""
import os
import subprocess
import sys

from conftest import BIN, ROOT


def test_compatibility_table_is_current():
    result = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "compatibility.py"),
                             "--check", BIN], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_compatibility_table_lists_the_catalog_as_implemented():
    text = open(os.path.join(ROOT, "docs", "compatibility.md")).read()
    for op in ("CreateDatabase", "GetPartitions", "BatchCreatePartition", "CreatePartitionIndex",
               "SearchTables", "UpdateColumnStatisticsForPartition", "TagResource"):
        assert f"| {op} | implemented |" in text
    for op in ("CreateCrawler", "StartCrawler", "ListCrawls", "CreateClassifier",
               "StartCrawlerSchedule", "CreateTrigger", "StartWorkflowRun"):
        assert f"| {op} | implemented |" in text
    for op in ("CreateDataQualityRuleset", "ListDataQualityRulesets", "GetDataQualityResult",
               "BatchGetDataQualityResult"):
        assert f"| {op} | implemented |" in text
    for op in ("StartDataQualityRulesetEvaluationRun", "CancelDataQualityRulesetEvaluationRun",
               "StartDataQualityRuleRecommendationRun", "ListDataQualityRuleRecommendationRuns"):
        assert f"| {op} | implemented |" in text
    assert "| OpenGluePublishDataQualityResult |" in text
    assert "| OpenGluePutDataQualityRecommendation |" in text
    for op in ("ListDataQualityStatistics", "BatchPutDataQualityStatisticAnnotation"):
        assert f"| {op} | implemented |" in text
    assert "| GetDataQualityModel | not yet |" in text
    assert "| CreateBlueprint | not yet |" in text


def test_configuration_page_lists_every_key_of_serve_help():
    """docs/configuration.md lists each key `openglue serve --help` prints (the help is generated
    from the one table of keys, src/common/config.cc), with its environment name and flag."""
    import re
    help_text = subprocess.run([BIN, "serve", "--help"], capture_output=True, text=True,
                               timeout=30).stdout
    envs = re.findall(r"env (OPENGLUE_[A-Z0-9_]+), file `([a-z0-9_]+) = \.\.\.`", help_text)
    assert len(envs) >= 10, help_text
    page = open(os.path.join(ROOT, "docs", "configuration.md")).read()
    for env, key in envs:
        flag = "--" + key.replace("_", "-")
        assert f"| `{key}` | `{env}` | `{flag}` |" in page, f"docs/configuration.md lacks {key}"
