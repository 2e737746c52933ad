"""Prints the Markdown table of the conformance corpus (tests/conformance): one row per case with
the developer guide page and example heading it reproduces and its result on each engine (pass,
xfail with the reason, fail, or not run with the reason), then the pages' examples the corpus
cannot run locally.

Usage:
  python3 tools/conformance_table.py                 # runs the corpus (pytest --junitxml)
  python3 tools/conformance_table.py --junit r.xml   # reads a junit XML of an earlier run
"""
import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "conformance")
DG = "https://docs.aws.amazon.com/glue/latest/dg/"
# aws-samples/aws-glue-samples files (tests/conformance/test_samples.py, test_catalog_reads.py)
SAMPLES = "https://github.com/aws-samples/aws-glue-samples/blob/master/"
CASE_URL = re.compile(r"https://docs\.aws\.amazon\.com/\S+?\.html"
                      r"|https://github\.com/aws-samples/aws-glue-samples/blob/master/\S+?\.(?:py|md)")

# Examples with an output that the corpus does not run, and why.
NOT_RUN = [
    ("aws-glue-api-crawler-pyspark-extensions-dynamic-frame",
     "Example: Use filter to get a filtered selection of fields",
     "its counts (163065, 564) are of the full Medicare sample file, which the page does not show"),
    ("aws-glue-api-crawler-pyspark-transforms-filter", "Example",
     "counts of the full Medicare sample file (163065), not on the page"),
    ("aws-glue-api-crawler-pyspark-transforms-map", "Example",
     "count of the full Medicare sample file; the schemas are the DynamicFrame page's map example"),
    ("aws-glue-api-crawler-pyspark-extensions-dynamic-frame",
     "Example: Use resolveChoice to handle a column that contains multiple types",
     "its tables are 20 rows of the Medicare catalog table (a crawled choice column), not on the page"),
    ("aws-glue-api-crawler-pyspark-extensions-dynamic-frame",
     "Example: Use relationalize to flatten a nested schema in a DynamicFrame (its show())",
     "the rows of ids 10 and 75 need the full legislators data set, not on the page"),
    ("aws-glue-api-crawler-pyspark-extensions-dynamic-frame",
     "Example: Use unbox to unbox a string field into a struct (its show())",
     "the table shows truncated Medicare values of 20 rows, not the records"),
    ("aws-glue-api-crawler-pyspark-extensions-dynamic-frame",
     "simplify_ddb_json / unnest_ddb_json examples",
     "they read a DynamoDB export (dynamodb.export) and print getNumPartitions()"),
    ("aws-glue-api-crawler-pyspark-extensions-dynamic-frame", "Comprehensive DynamicFrame examples",
     "PostgreSQL/MySQL reads with no output shown"),
] + [
    # The format, reader/writer, collection and GlueContext pages: examples without an output.
    (page, heading, "the page's examples show no output; the options they use are tested in "
                    + where)
    for page, heading, where in [
        ("aws-glue-programming-etl-format-csv-home", "Example: Read CSV files or folders from S3",
         "python/tests/test_dynamicframe_io.py"),
        ("aws-glue-programming-etl-format-json-home", "Example: Read JSON files or folders from S3",
         "python/tests/test_dynamicframe_io.py"),
        ("aws-glue-programming-etl-format-parquet-home",
         "Example: Read Parquet files or folders from S3", "python/tests/test_dynamicframe_io.py"),
        ("aws-glue-programming-etl-format-orc-home", "Example: Read ORC files or folders from S3",
         "python/tests/test_dynamicframe_io.py"),
        ("aws-glue-programming-etl-format-avro-home", "Example: Read Avro files or folders from S3",
         "python/tests/test_pyformats.py"),
        ("aws-glue-programming-etl-format-xml-home", "Example: Read XML from S3 (and withSchema)",
         "python/tests/test_pyformats.py"),
        ("aws-glue-api-crawler-pyspark-extensions-dynamic-frame-reader", "from_options, from_catalog",
         "python/tests/test_dynamicframe_io.py"),
        ("aws-glue-api-crawler-pyspark-extensions-dynamic-frame-writer",
         "Example for write_dynamic_frame", "python/tests/test_dynamicframe_io.py"),
        ("aws-glue-api-crawler-pyspark-extensions-dynamic-frame-collection", "(no example)",
         "python/tests/test_transforms.py"),
        ("aws-glue-api-crawler-pyspark-extensions-glue-context",
         "purge_table, purge_s3_path, transition_*, getSource, add_ingestion_time_columns",
         "python/tests/test_dynamicframe_io.py"),
    ]
]


def cases():
    """{test function name: (page URL, heading)} from the docstrings of tests/conformance."""
    found = {}
    for name in sorted(os.listdir(CORPUS)):
        if not (name.startswith("test_") and name.endswith(".py")):
            continue
        tree = ast.parse(open(os.path.join(CORPUS, name)).read())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                doc = ast.get_docstring(node) or ""
                url = CASE_URL.search(doc)
                heading = re.search(r'"([^"]+)"', doc)
                found[node.name] = (url.group(0) if url else "", heading.group(1) if heading else "")
    return found


def run_corpus(xml_path):
    env = dict(os.environ)
    env["PATH"] = os.path.join(ROOT, ".venv", "bin") + os.pathsep + env.get("PATH", "")
    python = os.path.join(ROOT, ".venv", "bin", "python")
    subprocess.run([python if os.path.exists(python) else sys.executable, "-m", "pytest", "-q",
                    "-p", "no:cacheprovider", "-W", "ignore", CORPUS, "--junitxml", xml_path],
                   cwd=ROOT, env=env, stdout=subprocess.DEVNULL)


def results(xml_path):
    """{(function, engine): text} from a junit XML."""
    out = {}
    for tc in ET.parse(xml_path).getroot().iter("testcase"):
        m = re.match(r"(\w+)\[(\w+)\]", tc.get("name", ""))
        if not m:
            continue
        text = "pass"
        for child in tc:
            message = (child.get("message") or "").strip()
            if child.tag == "skipped" and child.get("type") == "pytest.xfail":
                text = "xfail: " + re.sub(r"^reason:\s*", "", message)
            elif child.tag == "skipped":
                text = "not run: " + re.sub(r"^.*?Skipped:\s*", "", message)
            elif child.tag in ("failure", "error"):
                text = "FAIL: " + message.splitlines()[0][:120] if message else "FAIL"
        out[(m.group(1), m.group(2))] = text
    return out


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def render(xml_path):
    docs = cases()
    res = results(xml_path)
    lines = ["| Case | Page and heading | embedded | Spark |", "|---|---|---|---|"]
    for fn, (url, heading) in docs.items():
        if url.startswith(DG):
            pg = url[len(DG):-len(".html")]
        elif url.startswith(SAMPLES):
            pg = "aws-glue-samples " + url[len(SAMPLES):]
        else:
            pg = url
        where = "[{}]({}): {}".format(pg, url, heading) if url else heading
        lines.append("| `{}` | {} | {} | {} |".format(
            fn, cell(where), cell(res.get((fn, "embedded"), "not run: not collected")),
            cell(res.get((fn, "spark"), "not run: not collected"))))
    for pg, heading, why in NOT_RUN:
        lines.append("| (none) | [{}]({}{}.html): {} | not run: {} | not run: {} |".format(
            pg, DG, pg, cell(heading), cell(why), cell(why)))
    # Only the corpus's cases count (a junit XML of the whole suite holds other tests too).
    runs = {key: v for key, v in res.items() if key[0] in docs}
    totals = []
    for engine in ("embedded", "spark"):
        mine = [v for (_, e), v in runs.items() if e == engine]
        totals.append("{}: {} pass, {} xfail, {} fail".format(
            "Spark" if engine == "spark" else engine, sum(1 for v in mine if v == "pass"),
            sum(1 for v in mine if v.startswith("xfail")),
            sum(1 for v in mine if v.startswith("FAIL"))))
    lines += ["", "{} runs ({}).".format(len(runs), "; ".join(totals))]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--junit", help="a junit XML of an earlier run of tests/conformance")
    args = parser.parse_args()
    if args.junit:
        sys.stdout.write(render(args.junit))
        return
    with tempfile.TemporaryDirectory() as tmp:
        xml_path = os.path.join(tmp, "conformance.xml")
        run_corpus(xml_path)
        sys.stdout.write(render(xml_path))


if __name__ == "__main__":
    main()
