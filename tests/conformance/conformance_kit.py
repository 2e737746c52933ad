"""Shared helpers for the conformance corpus (tests/conformance): the AWS Glue developer guide's
PySpark examples, rebuilt with their input data and checked against the outputs the pages show.

Every case runs on both engines: the embedded C++/Arrow engine and the Spark engine (one local
SparkSession for the whole run, python/tests/engine_kit.spark_session()). A case that differs
from the page is marked xfail(strict=True) for that engine with a one-line reason; its expected
text is never edited to match OpenGlue.

Text comparison: the pages render program output without its blank lines (printSchema() and
Spark's show() end with one), and some older pages collapse runs of spaces inside code blocks.
`out_lines()` therefore compares the non-empty lines of what a case printed; every other
character (indentation, padding, order) is compared exactly. Where a page collapsed Spark's
column padding, `spark_table()` pads the page's cells the way Spark's show() does (right-aligned
to the widest cell of the column); the cells themselves are the page's.
"""
import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for _p in (os.path.join(ROOT, "python"), os.path.join(ROOT, "python", "tests")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import engine_kit  # noqa: E402  (python/tests/engine_kit.py)

DG = "https://docs.aws.amazon.com/glue/latest/dg/"
ENGINES = ("embedded", "spark")


def page(name):
    """The live URL of a developer guide page, from its doc_source/ file name."""
    return DG + name + ".html"


def engines(embedded=None, spark=None, skip_embedded=None, skip_spark=None):
    """pytest params over both engines. embedded/spark: an xfail(strict=True) reason for that
    engine (None: the case is expected to pass). skip_*: a reason the example cannot run on
    that engine at all."""
    out = []
    for kind, reason, skip in (("embedded", embedded, skip_embedded), ("spark", spark, skip_spark)):
        marks = []
        if skip:
            marks.append(pytest.mark.skip(reason=skip))
        elif reason:
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        out.append(pytest.param(kind, marks=marks, id=kind))
    return pytest.mark.parametrize("engine", out)


def glue_context(kind):
    """A GlueContext on the embedded engine or on the Spark engine (the shared SparkSession)."""
    return engine_kit.glue_context(kind)


def write_json_lines(folder, lines, name="part-00000.json"):
    """Writes the page's JSON lines (strings, exactly as the page shows them, or dicts) into
    folder/name and returns folder."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w") as f:
        for line in lines:
            f.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    return str(folder)


def write_text(folder, text, name):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w") as f:
        f.write(text)
    return str(folder)


def json_frame(ctx, folder, lines):
    """What a catalog table over S3 JSON gives the page's example: the records read with
    create_dynamic_frame.from_options("s3", {"paths": [folder]}, format="json")."""
    write_json_lines(folder, lines)
    return ctx.create_dynamic_frame.from_options("s3", {"paths": [str(folder)]}, format="json")


def records_frame(ctx, records, name="frame", schema=None):
    """A frame over in-memory records (OpenGlue's DynamicFrame.from_records), for examples whose
    input is another example's result or a Spark DataFrame built in the script."""
    from awsglue.dynamicframe import DynamicFrame
    return DynamicFrame.from_records(records, ctx, name, schema=schema)


def out_lines(text):
    """The non-empty lines of captured output (see the module docstring)."""
    return [line for line in text.split("\n") if line.strip()]


def expect(text):
    """The page's output block as a list of non-empty lines."""
    return out_lines(text.strip("\n"))


def page_nulls(lines):
    """Captured show() lines with Spark 3.4+'s `NULL` cells written `null`, as the pages' older
    Spark printed them (Glue 5.0's Spark 3.5 prints NULL too): the cell is the same value."""
    import re
    return [re.sub(r"(?<=\|)( *)NULL(?=\|)", r"\1null", line) for line in lines]


def spark_table(header, rows, more=False):
    """The lines Spark's DataFrame.show() prints for these cells (strings as the page shows
    them, already truncated), right-aligned like Spark; more=True adds the "only showing top 20
    rows" line."""
    cols = list(zip(*([header] + [list(r) for r in rows])))
    widths = [max(3, max(len(str(c)) for c in col)) for col in cols]
    sep = "+" + "+".join("-" * w for w in widths) + "+"

    def line(cells):
        return "|" + "|".join(str(c).rjust(w) for c, w in zip(cells, widths)) + "|"

    out = [sep, line(header), sep] + [line(r) for r in rows] + [sep]
    if more:
        out.append("only showing top 20 rows")
    return out


def plain(value):
    """A record as the pages write it: fields that are null (absent) left out, recursively."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def frame_records(frame):
    """A frame's records as Python dicts (nulls left out, see plain())."""
    return [plain(r) for r in frame.to_arrow().to_pylist()]
