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
    assert "| StartCrawler | not yet |" in text
