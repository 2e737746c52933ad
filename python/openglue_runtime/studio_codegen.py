"""Glue Studio visual jobs: the PySpark script of a job's `CodeGenConfigurationNodes`.

A visual job (JobMode VISUAL) is a graph: node id -> one node of the CodeGenConfigurationNode
union (`{"S3CsvSource": {...}}`), each naming its upstream nodes in `Inputs`. When a run of such
a job finds no script at Command.ScriptLocation, the server hands the graph to the run
(`OPENGLUE_VISUAL_NODES`, a file in the run's folder) and `openglue_runtime.run_start` calls
`generate_for_run` before the script runs: the script is written where the run's bootstrap then
runs it, and the server copies it to ScriptLocation when the run ends (docs/visual-jobs.md).

`generate(nodes)` returns the script Glue Studio would show for the graph: Studio's header, the
helper functions the nodes need (`sparkSqlQuery`, `sparkUnion`, `sparkAggregate`, ...), then one
block per node in topological order (`# Script generated for node <Name>`, then
`<Name>_<id> = ...`, the name and id stripped to letters, digits and `_`), and `job.commit()`.
The code is written here from the documented node shapes (botocore's service model) and the
documented Glue API; it is OpenGlue's, not Studio's.

Everything is checked before a line is written, so a graph OpenGlue cannot run fails the run
before any data is touched: a node type without a generator (`VisualJobError`: "unsupported
visual node <id> of type <Type>"), an input that names no node, a cycle, a wrong number of
inputs, a missing required member, CustomCode that is not valid Python.
"""
import json
import os
import re
import sys
from typing import Callable, Dict, List, Optional, Tuple


class VisualJobError(ValueError):
    """The graph cannot be turned into a script; the message names the node."""


# ------------------------------------------------------------------------------------------------
# Python literals and names

def lit(value) -> str:
    """`value` (JSON data) as a Python literal, in Studio's style (double quotes, True/False)."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(lit(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{lit(str(k))}: {lit(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no literal for {type(value).__name__}")


def _identifier(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z_]", "", text or "")


def variable_name(name: str, node_id: str) -> str:
    """Studio's variable for a node: its name without spaces and symbols, `_`, its id likewise
    (`Amazon S3`, `node-1` -> `AmazonS3_node1`)."""
    base = re.sub(r"[^0-9A-Za-z]", "", name or "") or "Node"
    if base[0].isdigit():
        base = "Node" + base
    return f"{base}_{_identifier(node_id) or 'node'}"


def _path(path) -> str:
    """A Studio path (a list of names, or one name) as Glue's dotted path."""
    if isinstance(path, str):
        return path
    return ".".join(str(p) for p in path)


def _natural(key: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", key)]


# ------------------------------------------------------------------------------------------------
# The graph

class Node:
    def __init__(self, node_id: str, node_type: str, spec: dict):
        self.id = node_id
        self.type = node_type
        self.spec = spec
        self.name = str(spec.get("Name") or node_id)
        self.inputs: List[str] = [str(i) for i in (spec.get("Inputs") or [])]
        self.var = ""

    def where(self) -> str:
        return f"visual node {self.id} ({self.type} \"{self.name}\")"

    def fail(self, message: str) -> VisualJobError:
        return VisualJobError(f"{self.where()}: {message}")

    def need(self, member: str):
        value = self.spec.get(member)
        if value is None or value == "" or value == []:
            raise self.fail(f"{member} is required")
        return value


def parse(nodes) -> Dict[str, Node]:
    """The graph's nodes by id; VisualJobError for a node that is not one member of the union."""
    if not isinstance(nodes, dict) or not nodes:
        raise VisualJobError("CodeGenConfigurationNodes is empty: there is no graph to generate a "
                             "script from")
    parsed = {}
    for node_id, node in nodes.items():
        members = [k for k, v in (node or {}).items() if v is not None] if isinstance(node, dict) else []
        if len(members) != 1 or not isinstance(node[members[0]], dict):
            raise VisualJobError(
                f"visual node {node_id} must have exactly one node type (a member of "
                f"CodeGenConfigurationNode), has {', '.join(members) or 'none'}")
        parsed[str(node_id)] = Node(str(node_id), members[0], node[members[0]])
    return parsed


def topological_order(graph: Dict[str, Node]) -> List[Node]:
    """Upstream nodes first; among nodes ready together, by node id (natural order, so node-2
    comes before node-10). VisualJobError for an unknown input or a cycle."""
    for node in graph.values():
        for upstream in node.inputs:
            if upstream not in graph:
                raise node.fail(f"takes its input from node {upstream}, which is not in "
                                "CodeGenConfigurationNodes")
    waiting = {n.id: len(set(n.inputs)) for n in graph.values()}
    downstream: Dict[str, List[str]] = {n: [] for n in graph}
    for node in graph.values():
        for upstream in set(node.inputs):
            downstream[upstream].append(node.id)
    ready = sorted((n for n, count in waiting.items() if count == 0), key=_natural)
    order = []
    while ready:
        current = ready.pop(0)
        order.append(graph[current])
        for child in downstream[current]:
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.append(child)
        ready.sort(key=_natural)
    if len(order) != len(graph):
        stuck = sorted((n for n in graph if waiting[n] > 0), key=_natural)
        raise VisualJobError("CodeGenConfigurationNodes has a cycle through nodes "
                             + ", ".join(stuck))
    return order


# ------------------------------------------------------------------------------------------------
# Generators: one per node type. Each returns the node's block (without its comment line) and
# may ask for imports and helpers.

class Script:
    def __init__(self, graph: Dict[str, Node]):
        self.graph = graph
        self.imports: List[str] = []
        self.helpers: Dict[str, str] = {}
        self.counter = 0
        self.collections = set()  # ids of nodes whose value is a DynamicFrameCollection

    def need_import(self, line: str) -> None:
        if line not in self.imports:
            self.imports.append(line)

    def need_helper(self, name: str, code: str) -> None:
        self.helpers.setdefault(name, code)

    def frame(self, node: Node, index: int = 0) -> str:
        """The variable of the node's `index`th input, which must be a DynamicFrame."""
        upstream = self.graph[node.inputs[index]]
        if upstream.id in self.collections:
            raise node.fail(f"its input {upstream.id} is a DynamicFrameCollection (a CustomCode "
                            "node's output): put a SelectFromCollection node between them")
        return upstream.var


def _inputs(node: Node, low: int, high: Optional[int]) -> None:
    count = len(node.inputs)
    if count < low or (high is not None and count > high):
        want = str(low) if high == low else (f"at least {low}" if high is None else f"{low} to {high}")
        raise node.fail(f"takes {want} input{'s' if want != '1' else ''}, has {count}")


_SEPARATORS = {"comma": ",", "ctrla": "\u0001", "pipe": "|", "semicolon": ";", "tab": "\t"}
_QUOTES = {"quote": "\"", "quillemet": "\u00ab", "single_quote": "'", "disabled": "-1"}


def _s3_connection_options(node: Node) -> dict:
    spec = node.spec
    paths = node.need("Paths")
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise node.fail("Paths must be a list of s3:// paths")
    options = {"paths": paths}
    if spec.get("CompressionType"):
        options["compressionType"] = spec["CompressionType"]
    if spec.get("Exclusions"):
        options["exclusions"] = json.dumps(spec["Exclusions"])
    if spec.get("GroupFiles"):
        options["groupFiles"] = spec["GroupFiles"]
    if spec.get("GroupSize"):
        options["groupSize"] = spec["GroupSize"]
    if spec.get("MaxBand") is not None:
        options["maxBand"] = spec["MaxBand"]
    if spec.get("MaxFilesInBand") is not None:
        options["maxFilesInBand"] = spec["MaxFilesInBand"]
    if spec.get("Recurse"):
        options["recurse"] = True
    extra = spec.get("AdditionalOptions") or {}
    if extra.get("BoundedSize") is not None:
        options["boundedSize"] = str(extra["BoundedSize"])
    if extra.get("BoundedFiles") is not None:
        options["boundedFiles"] = str(extra["BoundedFiles"])
    return options


def _from_options(node: Node, fmt: str, format_options: dict) -> str:
    return (f"glueContext.create_dynamic_frame.from_options(format_options={lit(format_options)}, "
            f"connection_type=\"s3\", format={lit(fmt)}, "
            f"connection_options={lit(_s3_connection_options(node))}, "
            f"transformation_ctx={lit(node.var)})")


def gen_s3_csv_source(script: Script, node: Node) -> str:
    _inputs(node, 0, 0)
    spec = node.spec
    separator = node.need("Separator")
    quote = node.need("QuoteChar")
    if separator not in _SEPARATORS:
        raise node.fail(f"Separator {separator!r} is not one of {', '.join(_SEPARATORS)}")
    if quote not in _QUOTES:
        raise node.fail(f"QuoteChar {quote!r} is not one of {', '.join(_QUOTES)}")
    options = {"quoteChar": _QUOTES[quote], "withHeader": bool(spec.get("WithHeader", False)),
               "separator": _SEPARATORS[separator],
               "optimizePerformance": bool(spec.get("OptimizePerformance", False))}
    if spec.get("Escaper"):
        options["escaper"] = spec["Escaper"]
    if spec.get("Multiline"):
        options["multiline"] = True
    if spec.get("SkipFirst"):
        options["skipFirst"] = True
    return f"{node.var} = {_from_options(node, 'csv', options)}"


def gen_s3_json_source(script: Script, node: Node) -> str:
    _inputs(node, 0, 0)
    options = {"multiline": bool(node.spec.get("Multiline", False))}
    if node.spec.get("JsonPath"):
        options["jsonPath"] = node.spec["JsonPath"]
    return f"{node.var} = {_from_options(node, 'json', options)}"


def gen_s3_parquet_source(script: Script, node: Node) -> str:
    _inputs(node, 0, 0)
    return f"{node.var} = {_from_options(node, 'parquet', {})}"


def gen_catalog_source(script: Script, node: Node) -> str:
    _inputs(node, 0, 0)
    database, table = node.need("Database"), node.need("Table")
    args = [f"database={lit(database)}", f"table_name={lit(table)}"]
    if node.spec.get("PartitionPredicate"):
        args.append(f"push_down_predicate={lit(node.spec['PartitionPredicate'])}")
    extra = node.spec.get("AdditionalOptions") or {}
    additional = {}
    for member, option in (("BoundedSize", "boundedSize"), ("BoundedFiles", "boundedFiles")):
        if extra.get(member) is not None:
            additional[option] = str(extra[member])
    if additional:
        args.append(f"additional_options={lit(additional)}")
    args.append(f"transformation_ctx={lit(node.var)}")
    return f"{node.var} = glueContext.create_dynamic_frame.from_catalog({', '.join(args)})"


def _mappings(node: Node, entries, from_prefix: str = "", to_prefix: str = "") -> List[tuple]:
    out = []
    for entry in entries or []:
        if not isinstance(entry, dict):
            raise node.fail("each Mapping entry must be an object")
        if entry.get("Dropped"):
            continue
        from_path = _path(entry.get("FromPath") or entry.get("ToKey") or "")
        if from_prefix and not from_path.startswith(from_prefix + "."):
            from_path = f"{from_prefix}.{from_path}"
        to_key = entry.get("ToKey") or from_path.rsplit(".", 1)[-1]
        to_path = f"{to_prefix}.{to_key}" if to_prefix else to_key
        if not from_path:
            raise node.fail("a Mapping entry has neither FromPath nor ToKey")
        children = entry.get("Children") or []
        if children:
            out.extend(_mappings(node, children, from_path, to_path))
            continue
        from_type = entry.get("FromType") or entry.get("ToType")
        to_type = entry.get("ToType") or from_type
        if not from_type:
            raise node.fail(f"the Mapping of {from_path} has neither FromType nor ToType")
        out.append((from_path, from_type, to_path, to_type))
    return out


def gen_apply_mapping(script: Script, node: Node) -> str:
    _inputs(node, 1, 1)
    mappings = _mappings(node, node.need("Mapping"))
    return (f"{node.var} = ApplyMapping.apply(frame={script.frame(node)}, mappings=["
            + ", ".join("(" + ", ".join(lit(p) for p in m) + ")" for m in mappings)
            + f"], transformation_ctx={lit(node.var)})")


def _paths(node: Node, member: str, required: bool = True) -> List[str]:
    value = node.need(member) if required else (node.spec.get(member) or [])
    if not isinstance(value, list):
        raise node.fail(f"{member} must be a list of paths")
    return [_path(p) for p in value]


def gen_select_fields(script: Script, node: Node) -> str:
    _inputs(node, 1, 1)
    return (f"{node.var} = SelectFields.apply(frame={script.frame(node)}, "
            f"paths={lit(_paths(node, 'Paths'))}, transformation_ctx={lit(node.var)})")


def gen_drop_fields(script: Script, node: Node) -> str:
    _inputs(node, 1, 1)
    return (f"{node.var} = DropFields.apply(frame={script.frame(node)}, "
            f"paths={lit(_paths(node, 'Paths'))}, transformation_ctx={lit(node.var)})")


def gen_rename_field(script: Script, node: Node) -> str:
    _inputs(node, 1, 1)
    old, new = _path(node.need("SourcePath")), _path(node.need("TargetPath"))
    return (f"{node.var} = RenameField.apply(frame={script.frame(node)}, old_name={lit(old)}, "
            f"new_name={lit(new)}, transformation_ctx={lit(node.var)})")


def _constant(text: str) -> str:
    """A filter constant: a number when it reads as one (compared with a numeric column), else
    a string."""
    if re.fullmatch(r"[+-]?\d+", text.strip()):
        return str(int(text))
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?", text.strip()):
        return repr(float(text))
    return lit(text)


_COMPARISONS = {"EQ": "==", "LT": "<", "GT": ">", "LTE": "<=", "GTE": ">="}


def _filter_operand(node: Node, value, regex: bool = False) -> str:
    if not isinstance(value, dict) or value.get("Type") not in ("COLUMNEXTRACTED", "CONSTANT"):
        raise node.fail("each filter value needs Type COLUMNEXTRACTED or CONSTANT")
    parts = value.get("Value") or []
    if not isinstance(parts, list) or not parts:
        raise node.fail("a filter value has no Value")
    if value["Type"] == "COLUMNEXTRACTED":
        return "row" + "".join(f"[{lit(str(p))}]" for p in parts)
    text = str(parts[0])
    return lit(text) if regex else _constant(text)


def _filter_expression(script: Script, node: Node, expression) -> str:
    if not isinstance(expression, dict):
        raise node.fail("each Filters entry must be an object")
    operation = expression.get("Operation")
    values = expression.get("Values") or []
    if operation == "ISNULL":
        if len(values) != 1:
            raise node.fail("an ISNULL filter takes one value (the column)")
        text = f"{_filter_operand(node, values[0])} is None"
    elif operation == "REGEX":
        if len(values) != 2:
            raise node.fail("a REGEX filter takes two values (the column and the pattern)")
        script.need_import("import re")
        column = _filter_operand(node, values[0])
        pattern = _filter_operand(node, values[1], regex=True)
        text = f"bool(re.match({pattern}, {column}))"
    elif operation in _COMPARISONS:
        if len(values) != 2:
            raise node.fail(f"an {operation} filter takes two values")
        text = (f"{_filter_operand(node, values[0])} {_COMPARISONS[operation]} "
                f"{_filter_operand(node, values[1])}")
    else:
        raise node.fail(f"filter Operation {operation!r} is not one of EQ, LT, GT, LTE, GTE, "
                        "REGEX, ISNULL")
    return f"not({text})" if expression.get("Negated") else text


def gen_filter(script: Script, node: Node) -> str:
    _inputs(node, 1, 1)
    operator = node.need("LogicalOperator")
    if operator not in ("AND", "OR"):
        raise node.fail(f"LogicalOperator {operator!r} is not AND or OR")
    filters = node.need("Filters")
    joined = f" {operator.lower()} ".join(_filter_expression(script, node, f) for f in filters)
    return (f"{node.var} = Filter.apply(frame={script.frame(node)}, f=lambda row: ({joined}), "
            f"transformation_ctx={lit(node.var)})")


def gen_join(script: Script, node: Node) -> str:
    _inputs(node, 2, 2)
    join_type = node.need("JoinType")
    columns = node.need("Columns")
    keys: Dict[str, List[str]] = {}
    for column in columns:
        if not isinstance(column, dict) or column.get("From") not in node.inputs:
            raise node.fail("each Columns entry needs From (one of the node's Inputs) and Keys")
        keys[column["From"]] = [_path(k) for k in (column.get("Keys") or [])]
    left, right = node.inputs
    keys1, keys2 = keys.get(left, []), keys.get(right, [])
    if not keys1 or len(keys1) != len(keys2):
        raise node.fail("Columns must give as many join keys for each of the two inputs")
    frame1, frame2 = script.frame(node, 0), script.frame(node, 1)
    if join_type == "equijoin":
        return (f"{node.var} = Join.apply(frame1={frame1}, frame2={frame2}, keys1={lit(keys1)}, "
                f"keys2={lit(keys2)}, transformation_ctx={lit(node.var)})")
    if join_type not in ("left", "right", "outer", "leftsemi", "leftanti"):
        raise node.fail(f"JoinType {join_type!r} is not one of equijoin, left, right, outer, "
                        "leftsemi, leftanti")
    script.need_import("from awsglue.dynamicframe import DynamicFrame")
    condition = " & ".join(f"({frame1}.toDF()[{lit(a)}] == {frame2}.toDF()[{lit(b)}])"
                           for a, b in zip(keys1, keys2))
    return (f"{node.var} = DynamicFrame.fromDF({frame1}.toDF().join({frame2}.toDF(), "
            f"{condition}, {lit(join_type)}), glueContext, {lit(node.var)})")


_SQL_QUERY_HELPER = '''def sparkSqlQuery(glueContext, query, mapping, transformation_ctx) -> DynamicFrame:
    for alias, frame in mapping.items():
        frame.toDF().createOrReplaceTempView(alias)
    result = spark.sql(query)
    return DynamicFrame.fromDF(result, glueContext, transformation_ctx)'''

_UNION_HELPER = '''def sparkUnion(glueContext, unionType, mapping, transformation_ctx) -> DynamicFrame:
    frames = [frame.toDF() for frame in mapping.values()]
    result = frames[0].union(frames[1])
    if unionType == "DISTINCT":
        result = result.distinct()
    return DynamicFrame.fromDF(result, glueContext, transformation_ctx)'''

_AGGREGATE_HELPER = '''def sparkAggregate(glueContext, parentFrame, groups, aggs, transformation_ctx) -> DynamicFrame:
    aggsFuncs = [getattr(SqlFuncs, func)(column) for column, func in aggs]
    frame = parentFrame.toDF()
    result = frame.groupBy(*groups).agg(*aggsFuncs) if groups else frame.agg(*aggsFuncs)
    return DynamicFrame.fromDF(result, glueContext, transformation_ctx)'''

_DROP_NULLS_HELPER = '''def drop_nulls(glueContext, frame, nullStringSet, nullIntegerSet, transformation_ctx) -> DynamicFrame:
    data = frame.toDF()
    nullColumns = []
    for field in data.schema.fields:
        values = set()
        for row in data.select(field.name).distinct().collect():
            value = row[0]
            values.add(value.strip() if isinstance(value, str) else value)
        values.discard(None)
        if isinstance(field.dataType, StringType):
            empty = values <= nullStringSet
        elif isinstance(field.dataType, (IntegerType, LongType, ShortType, DoubleType)):
            empty = values <= nullIntegerSet
        else:
            empty = not values
        if empty:
            nullColumns.append(field.name)
    return DropFields.apply(frame=frame, paths=nullColumns, transformation_ctx=transformation_ctx)'''


def gen_union(script: Script, node: Node) -> str:
    _inputs(node, 2, 2)
    union_type = node.need("UnionType")
    if union_type not in ("ALL", "DISTINCT"):
        raise node.fail(f"UnionType {union_type!r} is not ALL or DISTINCT")
    script.need_import("from awsglue.dynamicframe import DynamicFrame")
    script.need_helper("sparkUnion", _UNION_HELPER)
    mapping = "{" + ", ".join(f"\"source{i + 1}\": {script.frame(node, i)}" for i in range(2)) + "}"
    return (f"{node.var} = sparkUnion(glueContext, unionType = {lit(union_type)}, "
            f"mapping = {mapping}, transformation_ctx = {lit(node.var)})")


def _triple_quoted(text: str) -> Optional[str]:
    if "'''" in text or "\\" in text or text.endswith("'"):
        return None
    return "'''\n" + text + "\n'''"


def gen_spark_sql(script: Script, node: Node) -> str:
    _inputs(node, 1, None)
    query = node.need("SqlQuery")
    aliases = node.need("SqlAliases")
    mapping = []
    for alias in aliases:
        if not isinstance(alias, dict) or not alias.get("Alias") or alias.get("From") not in node.inputs:
            raise node.fail("each SqlAliases entry needs Alias and From (one of the node's Inputs)")
        mapping.append(f"{lit(alias['Alias'])}: {script.frame(node, node.inputs.index(alias['From']))}")
    script.need_import("from awsglue.dynamicframe import DynamicFrame")
    script.need_helper("sparkSqlQuery", _SQL_QUERY_HELPER)
    query_var = f"SqlQuery{script.counter}"
    script.counter += 1
    literal = _triple_quoted(str(query)) or lit(str(query))
    return (f"{query_var} = {literal}\n"
            f"{node.var} = sparkSqlQuery(glueContext, query = {query_var}, "
            f"mapping = {{{', '.join(mapping)}}}, transformation_ctx = {lit(node.var)})")


def gen_drop_null_fields(script: Script, node: Node) -> str:
    _inputs(node, 1, 1)
    boxes = node.spec.get("NullCheckBoxList") or {}
    texts = node.spec.get("NullTextList") or []
    strings, numbers = set(), set()
    if boxes.get("IsEmpty"):
        strings.add("")
    if boxes.get("IsNullString"):
        strings.add("null")
    if boxes.get("IsNegOne"):
        numbers.add(-1)
    for entry in texts:
        if not isinstance(entry, dict) or entry.get("Value") is None:
            raise node.fail("each NullTextList entry needs a Value")
        kind = str((entry.get("Datatype") or {}).get("Id", "")).lower()
        value = str(entry["Value"])
        if any(t in kind for t in ("int", "long", "short", "double", "float", "number")):
            try:
                numbers.add(int(value) if re.fullmatch(r"[+-]?\d+", value.strip()) else float(value))
            except ValueError:
                raise node.fail(f"NullTextList value {value!r} of type {kind} is not a number")
        else:
            strings.add(value)
    if not strings and not numbers:
        # Glue's own transform: the fields whose every value is null go.
        return (f"{node.var} = DropNullFields.apply(frame={script.frame(node)}, "
                f"transformation_ctx={lit(node.var)})")
    script.need_import("from awsglue.dynamicframe import DynamicFrame")
    script.need_import("from pyspark.sql.types import StringType, IntegerType, LongType, ShortType, DoubleType")
    script.need_helper("drop_nulls", _DROP_NULLS_HELPER)
    string_set = "{" + ", ".join(lit(s) for s in sorted(strings)) + "}" if strings else "set()"
    number_set = "{" + ", ".join(repr(n) for n in sorted(numbers)) + "}" if numbers else "set()"
    return (f"{node.var} = drop_nulls(glueContext, frame={script.frame(node)}, "
            f"nullStringSet={string_set}, nullIntegerSet={number_set}, "
            f"transformation_ctx={lit(node.var)})")


def gen_drop_duplicates(script: Script, node: Node) -> str:
    _inputs(node, 1, 1)
    columns = _paths(node, "Columns", required=False)
    script.need_import("from awsglue.dynamicframe import DynamicFrame")
    inner = lit(columns) if columns else ""
    return (f"{node.var} = DynamicFrame.fromDF({script.frame(node)}.toDF().dropDuplicates({inner}), "
            f"glueContext, {lit(node.var)})")


_AGG_FUNCTIONS = ("avg", "countDistinct", "count", "first", "last", "kurtosis", "max", "min",
                  "skewness", "stddev_samp", "stddev_pop", "sum", "sumDistinct", "var_samp",
                  "var_pop")


def gen_aggregate(script: Script, node: Node) -> str:
    _inputs(node, 1, 1)
    groups = _paths(node, "Groups", required=False)
    aggs = []
    for agg in node.need("Aggs"):
        if not isinstance(agg, dict) or not agg.get("Column") or agg.get("AggFunc") not in _AGG_FUNCTIONS:
            raise node.fail("each Aggs entry needs Column and AggFunc (one of "
                            + ", ".join(_AGG_FUNCTIONS) + ")")
        aggs.append([_path(agg["Column"]), agg["AggFunc"]])
    script.need_import("from awsglue.dynamicframe import DynamicFrame")
    script.need_import("from pyspark.sql import functions as SqlFuncs")
    script.need_helper("sparkAggregate", _AGGREGATE_HELPER)
    return (f"{node.var} = sparkAggregate(glueContext, parentFrame = {script.frame(node)}, "
            f"groups = {lit(groups)}, aggs = {lit(aggs)}, transformation_ctx = {lit(node.var)})")


def gen_spigot(script: Script, node: Node) -> str:
    _inputs(node, 1, 1)
    options = {}
    if node.spec.get("Topk") is not None:
        options["topk"] = node.spec["Topk"]
    if node.spec.get("Prob") is not None:
        options["prob"] = node.spec["Prob"]
    return (f"{node.var} = Spigot.apply(frame={script.frame(node)}, path={lit(node.need('Path'))}, "
            f"options={lit(options)}, transformation_ctx={lit(node.var)})")


def _dq_options(node: Node):
    publishing = node.spec.get("PublishingOptions") or {}
    context = publishing.get("EvaluationContext") or node.var
    options = {"dataQualityEvaluationContext": context,
               "enableDataQualityCloudWatchMetrics": bool(publishing.get("CloudWatchMetricsEnabled", True)),
               "enableDataQualityResultsPublishing": bool(publishing.get("ResultsPublishingEnabled", True))}
    if publishing.get("ResultsS3Prefix"):
        options["resultsS3Prefix"] = publishing["ResultsS3Prefix"]
    return options


def _dq_block(script: Script, node: Node, frame: str, additional: dict, sources: Optional[str]) -> str:
    ruleset = str(node.need("Ruleset"))
    try:
        from openglue_runtime.quality import dqdl
        dqdl.parse(ruleset)
    except ValueError as error:
        raise node.fail(f"its Ruleset is not DQDL: {error}")
    script.need_import("from awsgluedq.transforms import EvaluateDataQuality")
    ruleset_var = f"{node.var}_ruleset"
    literal = _triple_quoted(ruleset) or lit(ruleset)
    call = (f"EvaluateDataQuality().process_rows(frame={frame}, ruleset={ruleset_var}, "
            f"publishing_options={lit(_dq_options(node))}, additional_options={lit(additional)}"
            + (f", additional_data_sources={sources}" if sources else "") + ")")
    lines = [f"{ruleset_var} = {literal}", f"{node.var} = {call}"]
    if (node.spec.get("StopJobOnFailureOptions") or {}).get("StopJobOnFailureTiming"):
        lines.append(f"assert {node.var}[EvaluateDataQuality.DATA_QUALITY_RULE_OUTCOMES_KEY]"
                     f".filter(lambda x: x[\"Outcome\"] == \"Failed\").count() == 0, "
                     f"\"The job failed due to failing DQ rules for node: {node.var}\"")
    return "\n".join(lines)


def gen_evaluate_data_quality(script: Script, node: Node) -> str:
    """EvaluateDataQuality: the node's output is its input (Output PrimaryInput, the default) or
    the rule outcomes (EvaluationResults)."""
    _inputs(node, 1, 1)
    output = node.spec.get("Output") or "PrimaryInput"
    if output not in ("PrimaryInput", "EvaluationResults"):
        raise node.fail(f"Output {output!r} is not PrimaryInput or EvaluationResults")
    block = _dq_block(script, node, script.frame(node), {"observations.scope": "ALL"}, None)
    key = "DATA_QUALITY_ORIGINAL_DATA_KEY" if output == "PrimaryInput" else "DATA_QUALITY_RULE_OUTCOMES_KEY"
    return block + f"\n{node.var} = {node.var}[EvaluateDataQuality.{key}]"


def gen_evaluate_data_quality_multi_frame(script: Script, node: Node) -> str:
    """EvaluateDataQualityMultiFrame: the first input is the data, the others the
    AdditionalDataSources by alias; the node is a collection (ruleOutcomes, rowLevelOutcomes,
    originalData) that SelectFromCollection nodes read, as in Studio."""
    _inputs(node, 1, None)
    aliases = node.spec.get("AdditionalDataSources") or {}
    sources = []
    for alias, source in sorted(aliases.items()):
        if source not in node.inputs[1:]:
            raise node.fail(f"AdditionalDataSources {alias!r} names {source!r}, which is not one of "
                            "its Inputs after the first")
        sources.append(f"{lit(alias)}: {script.frame(node, node.inputs.index(source))}")
    additional = dict(node.spec.get("AdditionalOptions") or {})
    block = _dq_block(script, node, script.frame(node), additional,
                      "{" + ", ".join(sources) + "}" if sources else None)
    script.collections.add(node.id)
    return block


# Names the generated script defines itself.
_RESERVED = {"sparkSqlQuery", "sparkUnion", "sparkAggregate", "drop_nulls", "glueContext", "spark",
             "sc", "job", "args", "sys", "re", "DynamicFrame", "DynamicFrameCollection",
             "SqlFuncs"}


def gen_custom_code(script: Script, node: Node) -> str:
    _inputs(node, 1, None)
    code, class_name = node.need("Code"), node.need("ClassName")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(class_name)) or class_name in _RESERVED:
        raise node.fail(f"ClassName {class_name!r} is not a Python name the script can define")
    body = "\n".join(("    " + line) if line.strip() else "" for line in str(code).splitlines())
    definition = f"# Script generated for node {node.name}\ndef {class_name}(glueContext, dfc) -> DynamicFrameCollection:\n{body}"
    try:
        compile(definition + "\n", f"<CustomCode {node.id}>", "exec")
    except SyntaxError as error:
        raise node.fail(f"its Code is not valid Python: {error.msg} (line {error.lineno})")
    known = script.helpers.get(class_name)
    if known is not None and known != definition:
        raise node.fail(f"ClassName {class_name} is used by another CustomCode node with other code")
    script.need_import("from awsglue.dynamicframe import DynamicFrameCollection")
    script.need_import("from awsglue.dynamicframe import DynamicFrame")
    script.need_helper(class_name, definition)
    script.collections.add(node.id)
    frames = ", ".join(f"{lit(script.graph[i].var)}: {script.frame(node, n)}"
                       for n, i in enumerate(node.inputs))
    return (f"{node.var} = {class_name}(glueContext, "
            f"DynamicFrameCollection({{{frames}}}, glueContext))")


def gen_select_from_collection(script: Script, node: Node) -> str:
    _inputs(node, 1, 1)
    upstream = script.graph[node.inputs[0]]
    if upstream.id not in script.collections:
        raise node.fail(f"its input {upstream.id} is not a DynamicFrameCollection")
    index = node.spec.get("Index", 0)
    if not isinstance(index, int) or index < 0:
        raise node.fail("Index must be a non-negative integer")
    return (f"{node.var} = SelectFromCollection.apply(dfc={upstream.var}, "
            f"key=list({upstream.var}.keys())[{index}], transformation_ctx={lit(node.var)})")


def _partition_keys(node: Node) -> List[str]:
    return _paths(node, "PartitionKeys", required=False)


def _target_frame(script: Script, node: Node) -> str:
    frame = script.frame(node)
    partitions = node.spec.get("NumberTargetPartitions")
    if partitions not in (None, ""):
        if not re.fullmatch(r"\d+", str(partitions)) or int(partitions) < 1:
            raise node.fail(f"NumberTargetPartitions {partitions!r} is not a positive number")
        frame = f"{frame}.repartition({int(partitions)})"
    return frame


def _s3_sink(script: Script, node: Node, fmt: str, options: dict, format_options: dict) -> str:
    policy = node.spec.get("SchemaChangePolicy") or {}
    path = node.need("Path")
    if policy.get("EnableUpdateCatalog"):
        database, table = policy.get("Database"), policy.get("Table")
        if not database or not table:
            raise node.fail("SchemaChangePolicy.EnableUpdateCatalog needs its Database and Table")
        extra = "".join(f", {k}={lit(v)}" for k, v in format_options.items())
        sink_options = "".join(f"{k}={lit(v)}, " for k, v in options.items())
        return (f"{node.var} = glueContext.getSink(path={lit(path)}, connection_type=\"s3\", "
                f"updateBehavior={lit(policy.get('UpdateBehavior') or 'UPDATE_IN_DATABASE')}, "
                f"partitionKeys={lit(_partition_keys(node))}, enableUpdateCatalog=True, "
                f"{sink_options}transformation_ctx={lit(node.var)})\n"
                f"{node.var}.setCatalogInfo(catalogDatabase={lit(database)},catalogTableName={lit(table)})\n"
                f"{node.var}.setFormat({lit(fmt)}{extra})\n"
                f"{node.var}.writeFrame({_target_frame(script, node)})")
    connection = {"path": path, **options, "partitionKeys": _partition_keys(node)}
    text = (f"{node.var} = glueContext.write_dynamic_frame.from_options(frame={_target_frame(script, node)}, "
            f"connection_type=\"s3\", format={lit(fmt)}, connection_options={lit(connection)}")
    if format_options:
        text += f", format_options={lit(format_options)}"
    return text + f", transformation_ctx={lit(node.var)})"


def gen_s3_direct_target(script: Script, node: Node) -> str:
    _inputs(node, 1, 1)
    fmt = node.need("Format")
    compression = node.spec.get("Compression")
    if fmt in ("csv", "json"):
        options = {"compression": compression} if compression and compression != "none" else {}
        return _s3_sink(script, node, fmt, options, {})
    if fmt in ("parquet", "orc", "avro"):
        format_options = {"compression": compression} if compression else {}
        return _s3_sink(script, node, fmt, {}, format_options)
    raise VisualJobError(f"unsupported visual node {node.id} of type S3DirectTarget with Format "
                         f"{fmt}: OpenGlue generates S3DirectTarget for csv, json, parquet, orc "
                         "and avro (docs/visual-jobs.md)")


def gen_s3_glue_parquet_target(script: Script, node: Node) -> str:
    _inputs(node, 1, 1)
    return _s3_sink(script, node, "glueparquet", {},
                    {"compression": node.spec.get("Compression") or "snappy"})


def gen_catalog_target(script: Script, node: Node) -> str:
    _inputs(node, 1, 1)
    database, table = node.need("Database"), node.need("Table")
    additional = {}
    policy = node.spec.get("SchemaChangePolicy") or {}
    if policy.get("EnableUpdateCatalog"):
        additional["enableUpdateCatalog"] = True
        additional["updateBehavior"] = policy.get("UpdateBehavior") or "UPDATE_IN_DATABASE"
    keys = _partition_keys(node)
    if keys:
        additional["partitionKeys"] = keys
    args = [f"frame={_target_frame(script, node)}", f"database={lit(database)}",
            f"table_name={lit(table)}"]
    if additional:
        args.append(f"additional_options={lit(additional)}")
    args.append(f"transformation_ctx={lit(node.var)}")
    return f"{node.var} = glueContext.write_dynamic_frame.from_catalog({', '.join(args)})"


GENERATORS: Dict[str, Callable[[Script, Node], str]] = {
    "S3CsvSource": gen_s3_csv_source,
    "S3JsonSource": gen_s3_json_source,
    "S3ParquetSource": gen_s3_parquet_source,
    "S3CatalogSource": gen_catalog_source,
    "CatalogSource": gen_catalog_source,
    "ApplyMapping": gen_apply_mapping,
    "SelectFields": gen_select_fields,
    "DropFields": gen_drop_fields,
    "RenameField": gen_rename_field,
    "Filter": gen_filter,
    "Join": gen_join,
    "Union": gen_union,
    "SparkSQL": gen_spark_sql,
    "DropNullFields": gen_drop_null_fields,
    "DropDuplicates": gen_drop_duplicates,
    "Aggregate": gen_aggregate,
    "Spigot": gen_spigot,
    "CustomCode": gen_custom_code,
    "SelectFromCollection": gen_select_from_collection,
    "EvaluateDataQuality": gen_evaluate_data_quality,
    "EvaluateDataQualityMultiFrame": gen_evaluate_data_quality_multi_frame,
    "S3DirectTarget": gen_s3_direct_target,
    "S3GlueParquetTarget": gen_s3_glue_parquet_target,
    "S3CatalogTarget": gen_catalog_target,
    "CatalogTarget": gen_catalog_target,
}

HEADER = [
    "import sys",
    "from awsglue.transforms import *",
    "from awsglue.utils import getResolvedOptions",
    "from pyspark.context import SparkContext",
    "from awsglue.context import GlueContext",
    "from awsglue.job import Job",
]

PROLOGUE = """args = getResolvedOptions(sys.argv, ['JOB_NAME'])
sc = SparkContext()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args['JOB_NAME'], args)"""


def generate(nodes) -> str:
    """The script of the graph `nodes` (CodeGenConfigurationNodes as the API gives them).
    VisualJobError when it cannot be generated; nothing is run."""
    graph = parse(nodes)
    for node in sorted(graph.values(), key=lambda n: _natural(n.id)):
        if node.type not in GENERATORS:
            raise VisualJobError(
                f"unsupported visual node {node.id} of type {node.type}: OpenGlue generates "
                f"scripts for {', '.join(sorted(GENERATORS))} (docs/visual-jobs.md)")
    order = topological_order(graph)
    used = set()
    for node in order:
        var = variable_name(node.name, node.id)
        while var in used:
            var += "_"
        used.add(var)
        node.var = var
    script = Script(graph)
    blocks = []
    for node in order:
        code = GENERATORS[node.type](script, node)
        blocks.append(f"# Script generated for node {node.name}\n{code}")
    lines = HEADER + [i for i in script.imports if i not in HEADER]
    text = "\n".join(lines) + "\n\n"
    for helper in script.helpers.values():
        text += helper + "\n\n"
    text += PROLOGUE + "\n\n" + "\n\n".join(blocks) + "\n\njob.commit()\n"
    try:
        compile(text, "<generated script>", "exec")
    except SyntaxError as error:  # a generator's bug, or a value no literal could carry
        raise VisualJobError(f"the script generated from CodeGenConfigurationNodes is not valid "
                             f"Python: {error.msg} (line {error.lineno})")
    return text


def generate_for_run(nodes_path: str, script_path: str, location: str = "") -> int:
    """Reads the graph from `nodes_path` (the server's file in the run's folder, removed once
    read), writes the script to `script_path`, says so in the run's error log, and returns the
    number of nodes. VisualJobError when the graph cannot be generated."""
    with open(nodes_path, encoding="utf-8") as f:
        nodes = json.load(f)
    try:
        os.unlink(nodes_path)
    except OSError:
        pass
    text = generate(nodes)
    os.makedirs(os.path.dirname(os.path.abspath(script_path)), exist_ok=True)
    temporary = script_path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(temporary, script_path)
    print(f"[openglue] script generated from CodeGenConfigurationNodes ({len(nodes)} nodes)"
          + (f" for {location}" if location else ""), file=sys.stderr, flush=True)
    return len(nodes)


def main(argv=None) -> int:
    """`python -m openglue_runtime.studio_codegen NODES.json` prints the script of a graph (a
    CodeGenConfigurationNodes map, or a Job document holding one)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m openglue_runtime.studio_codegen NODES.json", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as f:
        document = json.load(f)
    if isinstance(document, dict) and "Job" in document:
        document = document["Job"]
    if isinstance(document, dict) and "CodeGenConfigurationNodes" in document:
        document = document["CodeGenConfigurationNodes"]
    try:
        sys.stdout.write(generate(document))
    except VisualJobError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
