"""The runtime's layout (python/README.md): `awsglue` holds exactly the public modules of AWS's
package; OpenGlue's machinery (`openglue_runtime`) never imports the façade; no import cycles.

The rules read the sources (every import statement, also those inside functions, which run
as surely as the top-level ones), the way tools/check_includes.py reads the C++; the last tests
import every public module path in a fresh interpreter, as a Glue script does.
"""
import ast
import os
import subprocess
import sys

import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FACADE, MACHINERY, STANDIN = "awsglue", "openglue_runtime", "pyspark"
DQ_FACADE = "awsgluedq"          # AWS Glue Data Quality's job library, a façade of its own

# AWS's `awsglue` modules that Glue scripts import (the developer guide's PySpark extension
# pages and aws-glue-libs' package), and the transform families of `awsglue.transforms`.
TRANSFORM_FAMILIES = ["apply_mapping", "coalesce", "collection_transforms", "drop_nulls",
                      "dynamicframe_filter", "dynamicframe_map", "errors_as_dynamicframe",
                      "field_transforms", "merge", "relationalize", "repartition",
                      "resolve_choice", "transform", "unbox", "union", "unnest_frame"]
PUBLIC_MODULES = sorted(
    ["awsglue", "awsglue.context", "awsglue.data_sink", "awsglue.data_source",
     "awsglue.dataframereader", "awsglue.dataframewriter", "awsglue.dynamicframe",
     "awsglue.gluetypes", "awsglue.job", "awsglue.transforms", "awsglue.utils"]
    + ["awsglue.transforms." + family for family in TRANSFORM_FAMILIES])
DQ_PUBLIC_MODULES = ["awsgluedq", "awsgluedq.transforms"]
# Compiled modules, which have no source to read: importing one never imports anything else.
EXTENSIONS = {"openglue_runtime.engines.embedded._engine"}


def _modules(top: str, root: str = PYTHON_DIR):
    """{dotted name: source path} of the package `top` under `root`."""
    found = {}
    for folder, dirs, names in os.walk(os.path.join(root, top)):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                dotted = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
                found[dotted[:-len(".__init__")] if dotted.endswith(".__init__") else dotted] = path
    return found


def _imports(module: str, path: str, known) -> set:
    """The modules of `known` (or extensions) that `module`'s source imports, anywhere in it."""
    is_package = path.endswith("__init__.py")
    package = module if is_package else module.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read(), path)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            # `from P import x` imports the module P.x when there is one, else P itself.
            names = [base + "." + a.name if base + "." + a.name in known or
                     base + "." + a.name in EXTENSIONS else base for a in node.names]
        else:
            continue
        for name in names:
            # `import a.b.c` imports the deepest module of the tree it names.
            while name and name not in known and name not in EXTENSIONS:
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
    return targets


def _graph():
    known = {**_modules(FACADE), **_modules(DQ_FACADE), **_modules(MACHINERY),
             **_modules(STANDIN, os.path.join(PYTHON_DIR, "shims"))}
    paths = dict(known)
    return {m: _imports(m, p, known) for m, p in paths.items()}


def test_the_facade_holds_exactly_aws_public_modules():
    assert sorted(_modules(FACADE)) == PUBLIC_MODULES
    assert sorted(_modules(DQ_FACADE)) == DQ_PUBLIC_MODULES


def test_the_machinery_and_the_standin_never_import_the_facade():
    facades = (FACADE, DQ_FACADE)
    wrong = sorted((m, t) for m, targets in _graph().items()
                   if m.split(".")[0] not in facades
                   for t in targets if t.split(".")[0] in facades)
    assert wrong == [], "machinery importing a façade (awsglue, awsgluedq): {}".format(wrong)


def test_the_engines_never_import_the_facade_or_each_others_callers():
    """An engine (openglue_runtime.engines.*) imports only what lies below it: the Glue types,
    storage, the catalog and JDBC clients, the script scanner (engine_select), Spark, and the
    embedded engine's operators (which the Spark engine runs per partition); never the façade,
    the bookmark state or the tools."""
    allowed_outside = {"openglue_runtime", "openglue_runtime.types", "openglue_runtime.storage",
                       "openglue_runtime.catalog", "openglue_runtime.jdbc",
                       "openglue_runtime.engine_select"}
    wrong = []
    for module, targets in _graph().items():
        if not module.startswith(MACHINERY + ".engines."):
            continue
        for target in targets:
            if target.startswith(MACHINERY + ".engines") or target in EXTENSIONS or \
                    target.split(".")[0] == STANDIN:  # Spark itself (or its stand-in)
                continue
            if target not in allowed_outside:
                wrong.append((module, target))
    assert wrong == [], "engines importing what they may not: {}".format(sorted(wrong))


def _cycles(graph):
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    assert _cycles(_graph()) == []


def test_the_cycle_check_finds_a_cycle():
    """The check itself: a pair of modules importing each other is reported."""
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def _run(code: str):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PYTHON_DIR]))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=PYTHON_DIR, timeout=120)


def test_every_public_module_path_imports_as_scripts_write_it():
    """The import lines of Glue scripts and of the developer guide, in a fresh interpreter."""
    script = "\n".join([
        "import importlib",
        "for name in {!r}:".format(PUBLIC_MODULES),
        "    importlib.import_module(name)",
        "from awsglue.context import GlueContext",
        "from awsglue.dynamicframe import (DynamicFrame, DynamicFrameCollection,",
        "                                  DynamicFrameReader, DynamicFrameWriter)",
        "from awsglue import DynamicFrame as Same",
        "assert Same is DynamicFrame",
        "from awsglue.transforms import *",
        "from awsgluedq.transforms import EvaluateDataQuality",
        "assert EvaluateDataQuality.DATA_QUALITY_RULE_OUTCOMES_KEY == 'ruleOutcomes'",
        "from awsglue.transforms import (ApplyMapping, ResolveChoice, DropNullFields, Relationalize,",
        "    Join, Filter, Map, SelectFields, DropFields, RenameField, SplitFields, SplitRows,",
        "    Spigot, Unbox, UnnestFrame, Union, ErrorsAsDynamicFrame, SelectFromCollection,",
        "    MapToCollection, FlatMap, GlueTransform)",
        "from awsglue.transforms.field_transforms import Join as J2",
        "assert J2 is Join",
        "from awsglue.transforms.apply_mapping import ApplyMapping as A2",
        "assert A2 is ApplyMapping",
        "from awsglue.gluetypes import *",
        "from awsglue.gluetypes import StructType, Field, StringType, LongType, ChoiceType",
        "from awsglue.utils import getResolvedOptions",
        "from awsglue.job import Job",
        "from awsglue.data_source import DataSource",
        "from awsglue.data_sink import DataSink",
        "from awsglue.dataframereader import DataFrameReader",
        "from awsglue.dataframewriter import DataFrameWriter",
        "import awsglue.transforms as t",
        "assert t.get_transform('applymapping').name() == 'ApplyMapping'",
        "assert sorted(x.name() for x in t.get_transforms())[:2] == ['ApplyMapping', 'Coalesce']",
        "print('ok')",
    ])
    result = _run(script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


@pytest.mark.parametrize("internal", ["awsglue.jdbc", "awsglue.catalog", "awsglue.spark_api",
                                      "awsglue._embedded", "awsglue.bookmarks"])
def test_openglues_internals_are_not_awsglue_modules(internal):
    """`import awsglue.jdbc` means nothing on AWS, and fails here as it does there."""
    result = _run("import {}".format(internal))
    assert result.returncode != 0
    assert "ModuleNotFoundError: No module named '{}'".format(internal) in result.stderr
