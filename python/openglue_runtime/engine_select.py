"""Which engine runs a script: `--engine auto|embedded|spark`.

`select_engine(source, requested)` returns (engine, reason). With `auto` (the default) a script
runs on the embedded engine unless it uses Spark's own API beyond Glue's entry points; that is
decided before the run starts by reading the script (Python's `ast`, nothing is executed):

- DynamicFrame <-> DataFrame: `.toDF()`, `DynamicFrame.fromDF(...)`, `.rdd`, and
  `glueContext.create_data_frame` / `write_data_frame` (which return or take DataFrames);
- a SparkSession used for more than its configuration: any attribute of a name bound to
  `glueContext.spark_session`, `SparkSession.builder....getOrCreate()` or `SparkSession(...)`
  other than `conf`, `sparkContext`, `stop` (so `spark.sql(...)`, `spark.read`,
  `spark.createDataFrame(...)`), and `SparkSession.builder` itself;
- a SparkContext used for more than housekeeping: `sc.parallelize`, `sc.textFile`, `sc._jsc`
  (anything but setLogLevel, stop, getConf, appName, setJobGroup, ...);
- `.sql(...)` on anything (`sqlContext.sql`, `spark_session.sql`), and the other members a
  GlueContext has as a pyspark SQLContext (SQL_CONTEXT_MEMBERS: `glueContext.read`,
  `glueContext.table(...)`, ...) on a name bound to `GlueContext(...)`;
- calling a name imported from `pyspark.sql.functions` (`col(...)`, `F.col(...)`, `@udf`), and
  importing pyspark modules that have no Glue use (`pyspark.ml`, `pyspark.streaming`,
  `pyspark.mllib`, `pyspark.pandas`).

Creating the SparkContext and GlueContext, `from pyspark.sql.types import ...` and setting
`spark.conf` are Glue's entry points and do not count. The scan errs towards Spark: a script it
sends to Spark runs correctly there, only slower. A job run calls this itself before its script
computes anything (openglue_runtime.engines.spark.engine.prepare); `python -m openglue_runtime.engine_select SCRIPT
--engine auto` prints the decision as JSON.
"""
import ast
import json
import sys
from typing import List, Optional, Sequence, Set, Tuple

ENGINES = ("auto", "embedded", "spark")

_SESSION_OK = {"conf", "sparkContext", "stop", "version"}
_CONTEXT_OK = {"setLogLevel", "stop", "getConf", "appName", "setJobGroup", "setJobDescription",
               "setLocalProperty", "master", "getOrCreate"}
# pyspark.sql.SQLContext's members (pyspark 3.5) that GlueContext has as a SQLContext
# (openglue_runtime/engines/spark/sql_context.py); setConf and getConf are configuration.
SQL_CONTEXT_MEMBERS = ("newSession", "setConf", "getConf", "udf", "udtf", "range",
                       "registerFunction", "registerJavaFunction", "createDataFrame",
                       "registerDataFrameAsTable", "dropTempTable", "createExternalTable", "sql",
                       "table", "tables", "tableNames", "cacheTable", "uncacheTable", "clearCache",
                       "read", "readStream", "streams")
_SQL_CONTEXT_OK = {"setConf", "getConf"}
_SPARK_ONLY_MODULES = ("pyspark.ml", "pyspark.mllib", "pyspark.streaming", "pyspark.pandas",
                       "pyspark.sql.streaming")
_DATAFRAME_CALLS = {"toDF": "toDF()", "fromDF": "DynamicFrame.fromDF()",
                    "create_data_frame": "glueContext.create_data_frame",
                    "create_data_frame_from_catalog": "glueContext.create_data_frame_from_catalog",
                    "create_data_frame_from_options": "glueContext.create_data_frame_from_options",
                    "write_data_frame": "glueContext.write_data_frame",
                    "forEachBatch": "glueContext.forEachBatch()",
                    "sql": "sql()", "createDataFrame": "createDataFrame()",
                    "parallelize": "parallelize()"}


class EngineChoiceError(ValueError):
    """`--engine` has a value other than auto, embedded or spark."""


def _dotted(node: ast.AST) -> str:
    """`a.b.c` for an attribute chain on a name, else ""."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _chain_contains(node: ast.AST, pred) -> bool:
    """Whether any node of the call/attribute chain ending at `node` satisfies `pred`."""
    while True:
        if pred(node):
            return True
        if isinstance(node, ast.Attribute):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return False


class _Scanner(ast.NodeVisitor):
    def __init__(self):
        self.uses: List[Tuple[int, str]] = []
        self.sessions: Set[str] = set()
        self.contexts: Set[str] = set()
        self.function_names: Set[str] = set()   # names imported from pyspark.sql.functions
        self.function_modules: Set[str] = set()  # aliases of pyspark.sql.functions
        self.session_classes: Set[str] = {"SparkSession"}
        self.context_classes: Set[str] = {"SparkContext"}
        self.glue_contexts: Set[str] = set()  # names bound to GlueContext(...)

    def use(self, node: ast.AST, what: str) -> None:
        self.uses.append((getattr(node, "lineno", 0), what))

    # -- imports ---------------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == "pyspark.sql.functions":
                self.function_modules.add(alias.asname or alias.name)
            if alias.name.startswith(_SPARK_ONLY_MODULES):
                self.use(node, f"import {alias.name}")
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if module.startswith(_SPARK_ONLY_MODULES) or (
                module == "pyspark" and any(a.name in ("ml", "mllib", "streaming", "pandas")
                                            for a in node.names)):
            self.use(node, f"from {module} import ...")
        for alias in node.names:
            bound = alias.asname or alias.name
            if module == "pyspark.sql.functions":
                if alias.name == "*":
                    self.function_names.add("*")
                else:
                    self.function_names.add(bound)
            elif module == "pyspark.sql" and alias.name == "functions":
                self.function_modules.add(bound)
            elif alias.name == "SparkSession":
                self.session_classes.add(bound)
            elif alias.name == "SparkContext":
                self.context_classes.add(bound)
        self.generic_visit(node)

    # -- what names are bound to -----------------------------------------------------------------
    def _is_session_expr(self, value: ast.AST) -> bool:
        def pred(n):
            if isinstance(n, ast.Attribute) and n.attr == "spark_session":
                return True
            if isinstance(n, ast.Attribute) and n.attr == "builder" and \
                    _dotted(n.value) in self.session_classes:
                return True
            if isinstance(n, ast.Name) and n.id in self.sessions:
                return isinstance(value, ast.Name)
            return False
        if isinstance(value, ast.Call) and _dotted(value.func) in self.session_classes:
            return True
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
                value.func.attr == "getActiveSession":
            return True
        return _chain_contains(value, pred)

    def _is_context_expr(self, value: ast.AST) -> bool:
        if isinstance(value, ast.Call):
            name = _dotted(value.func)
            if name in self.context_classes or any(
                    name == f"{c}.getOrCreate" for c in self.context_classes):
                return True
        if isinstance(value, ast.Attribute) and value.attr == "sparkContext":
            return True
        return isinstance(value, ast.Name) and value.id in self.contexts

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        session = self._is_session_expr(node.value)
        context = self._is_context_expr(node.value)
        glue = isinstance(node.value, ast.Call) and \
            _dotted(node.value.func).split(".")[-1] == "GlueContext"
        for target in node.targets:
            if isinstance(target, ast.Name):
                (self.sessions.add if session else self.sessions.discard)(target.id)
                (self.contexts.add if context else self.contexts.discard)(target.id)
                (self.glue_contexts.add if glue else self.glue_contexts.discard)(target.id)
            else:
                self.visit(target)

    # -- uses ------------------------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        base = node.value
        if isinstance(base, ast.Name) and base.id in self.sessions and \
                node.attr not in _SESSION_OK:
            self.use(node, f"{base.id}.{node.attr} (SparkSession)")
        elif isinstance(base, ast.Attribute) and base.attr == "spark_session" and \
                node.attr not in _SESSION_OK:
            self.use(node, f"spark_session.{node.attr}")
        elif isinstance(base, ast.Name) and base.id in self.contexts and \
                node.attr not in _CONTEXT_OK:
            self.use(node, f"{base.id}.{node.attr} (SparkContext)")
        elif isinstance(base, ast.Name) and base.id in self.glue_contexts and \
                node.attr in SQL_CONTEXT_MEMBERS and node.attr not in _SQL_CONTEXT_OK and \
                node.attr not in _DATAFRAME_CALLS:
            self.use(node, f"{base.id}.{node.attr} (SQLContext)")
        elif node.attr == "builder" and _dotted(base) in self.session_classes:
            self.use(node, "SparkSession.builder")
        elif node.attr == "rdd":
            self.use(node, ".rdd")
        elif node.attr in ("create_data_frame", "write_data_frame") or \
                node.attr.startswith(("create_data_frame_", "write_data_frame_")):
            self.use(node, f"glueContext.{node.attr}")
        elif isinstance(base, ast.Name) and base.id in self.function_modules:
            self.use(node, f"{base.id}.{node.attr} (pyspark.sql.functions)")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _DATAFRAME_CALLS and \
                func.attr not in ("create_data_frame", "write_data_frame"):
            self.use(node, _DATAFRAME_CALLS[func.attr])
        elif isinstance(func, ast.Name) and func.id in self.session_classes:
            self.use(node, "SparkSession()")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        # A decorator or argument that names a pyspark.sql.functions function (@udf, map(col, ..)).
        if node.id in self.function_names and isinstance(node.ctx, ast.Load):
            self.use(node, f"{node.id} (pyspark.sql.functions)")


# The names of pyspark.sql.functions that the scanner looks for after a star import (and that
# the pyspark stand-in defines, openglue_runtime/engines/embedded/spark_api.py).
FUNCTION_NAMES = (
    "col", "column", "lit", "expr", "when", "coalesce", "isnull", "isnan", "udf", "pandas_udf",
    "concat", "concat_ws", "substring", "split", "regexp_replace", "regexp_extract", "trim",
    "ltrim", "rtrim", "lower", "upper", "length", "to_date", "to_timestamp", "date_format",
    "current_date", "current_timestamp", "year", "month", "dayofmonth", "hour", "minute",
    "second", "datediff", "date_add", "date_sub", "unix_timestamp", "from_unixtime",
    "from_utc_timestamp", "to_utc_timestamp", "input_file_name", "monotonically_increasing_id",
    "sum", "count", "countDistinct", "avg", "mean", "min", "max", "first", "last",
    "collect_list", "collect_set", "explode", "explode_outer", "posexplode", "array", "struct",
    "create_map", "from_json", "to_json", "get_json_object", "size", "sort_array",
    "array_contains", "row_number", "rank", "dense_rank", "lag", "lead", "asc", "desc",
    "broadcast", "round", "abs", "sha2", "md5", "hash", "format_string", "lpad", "rpad",
    "translate", "nanvl", "greatest", "least", "approx_count_distinct", "stddev", "variance",
)


def find_spark_api_uses(source: str) -> List[Tuple[int, str]]:
    """The uses of Spark's own API in a script's source, as (line, what), in line order, one
    per (line, what). Raises SyntaxError when the source does not parse."""
    tree = ast.parse(source)
    scanner = _Scanner()
    scanner.visit(tree)
    # A star import of pyspark.sql.functions makes any call to an unknown name suspect; only
    # the common function names are looked for.
    if "*" in scanner.function_names:
        names = set(FUNCTION_NAMES) - {"sum", "min", "max", "round", "abs", "hash"}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in names:
                scanner.use(node, f"{node.func.id}() (pyspark.sql.functions)")
    seen = set()
    uses = []
    for use in sorted(scanner.uses):
        if use not in seen:
            seen.add(use)
            uses.append(use)
    return uses


def imported_modules(source: str) -> List[str]:
    """The top-level module names a source imports (`import a.b` and `from a.b import c` give
    "a"; relative imports are skipped). [] when the source does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    names: List[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module.split(".")[0])
    return list(dict.fromkeys(names))


def local_module_sources(source: str, search_dirs: Sequence[str],
                         limit: int = 50) -> List[Tuple[str, str]]:
    """(file name, source) of the modules a script imports, directly or through one another,
    that are plain `.py` files or packages in `search_dirs` (a run's `--extra-py-files`
    folder): Glue scripts often keep their Spark code in such a module (custom transforms that
    patch DynamicFrame). At most `limit` files, each at most 4 MB; unreadable ones are skipped."""
    import os
    found: List[Tuple[str, str]] = []
    seen: Set[str] = set()
    pending = imported_modules(source)
    while pending and len(found) < limit:
        name = pending.pop(0)
        if name in seen:
            continue
        seen.add(name)
        for folder in search_dirs:
            candidates = [os.path.join(folder, name + ".py")]
            package = os.path.join(folder, name)
            if os.path.isdir(package):
                candidates += sorted(os.path.join(package, f) for f in os.listdir(package)
                                     if f.endswith(".py"))
            for path in candidates:
                try:
                    if not os.path.isfile(path) or os.path.getsize(path) > 4 << 20:
                        continue
                    with open(path, encoding="utf-8", errors="replace") as f:
                        text = f.read()
                except OSError:
                    continue
                found.append((os.path.relpath(path, folder), text))
                pending.extend(imported_modules(text))
            if len(candidates) > 1 or os.path.isfile(candidates[0]):
                break
    return found[:limit]


def select_engine(source: str, requested: Optional[str] = "auto",
                  spark_available: bool = False,
                  modules: Sequence[Tuple[str, str]] = ()) -> Tuple[str, str]:
    """(engine, reason) for a script: "embedded" or "spark", and why, in a sentence for the
    run's log. `requested` is the job's `--engine` (None or "" means auto). Raises
    EngineChoiceError for any other value. `spark_available` says whether this installation
    can run Spark; `auto` names Spark only then (issue 10), else it explains the choice.
    `modules` are (file name, source) of the script's own modules (local_module_sources):
    their uses of Spark's API count as the script's, listed as `<file> line N: ...`."""
    engine = (requested or "auto").strip().lower()
    if engine not in ENGINES:
        raise EngineChoiceError(
            f"--engine {requested!r} is not an engine: use auto, embedded or spark")
    if engine == "embedded":
        return "embedded", "--engine embedded"
    if engine == "spark":
        return "spark", "--engine spark"
    try:
        uses = find_spark_api_uses(source)
    except (SyntaxError, ValueError) as e:
        return "embedded", (f"--engine auto: the script does not parse ({e}); the embedded "
                            "engine runs it and reports the error")
    uses = [(f"line {line}", what) for line, what in uses]
    for file_name, text in modules:
        try:
            uses += [(f"{file_name} line {line}", what)
                     for line, what in find_spark_api_uses(text)]
        except (SyntaxError, ValueError):
            continue  # a module that does not parse fails where the script imports it
    if not uses:
        return "embedded", "--engine auto: the script uses only the Glue API"
    listed = ", ".join(f"{where}: {what}" for where, what in uses[:5])
    more = f" and {len(uses) - 5} more" if len(uses) > 5 else ""
    if spark_available:
        return "spark", f"--engine auto: the script uses Spark's API ({listed}{more})"
    return "embedded", (f"--engine auto: the script uses Spark's API ({listed}{more}), but the "
                        "Spark engine is not available on this installation; the embedded engine "
                        "runs it and stops where Spark's API is first used")


def main(argv: Sequence[str]) -> int:
    """`python -m openglue_runtime.engine_select SCRIPT [--engine E] [--spark-available]`: prints
    {"engine", "reason", "uses"} as JSON; exit status 2 for a bad --engine or unreadable
    script."""
    args = list(argv)
    requested, spark_available = "auto", False
    if "--spark-available" in args:
        args.remove("--spark-available")
        spark_available = True
    if "--engine" in args:
        i = args.index("--engine")
        if i + 1 >= len(args):
            print("--engine needs a value", file=sys.stderr)
            return 2
        requested = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        print("usage: python -m openglue_runtime.engine_select SCRIPT [--engine auto|embedded|spark]",
              file=sys.stderr)
        return 2
    try:
        with open(args[0], encoding="utf-8", errors="replace") as f:
            source = f.read()
        engine, reason = select_engine(source, requested, spark_available)
    except (OSError, EngineChoiceError) as e:
        print(str(e), file=sys.stderr)
        return 2
    try:
        uses = find_spark_api_uses(source)
    except (SyntaxError, ValueError):
        uses = []
    print(json.dumps({"engine": engine, "reason": reason,
                      "uses": [{"line": l, "what": w} for l, w in uses]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
