"""DynamicFrame, DynamicFrameCollection and the reader/writer objects of GlueContext.

A DynamicFrame is a lazy plan on the embedded engine, on both engines (the Spark engine bridges
to DataFrames with toDF/fromDF, openglue_runtime/engines/spark/bridge.py): transforms
return new frames without reading data; `count`, `show`, `schema`, writes and the extensions
`to_arrow`/`to_pandas` run the plan. The frame never touches Arrow itself: everything goes through
`glue_ctx._engine` (see openglue_runtime/engines/embedded/engine.py for the methods an engine provides).
"""
import json
import math
import sys
from typing import Callable, Dict, Iterable, List, Optional

from openglue_runtime import types as gt
from openglue_runtime.run_state import spark_unavailable

__all__ = ["DynamicFrame", "DynamicFrameCollection", "DynamicFrameReader", "DynamicFrameWriter",
           "DynamicRecord", "ErrorThresholdExceeded"]

from openglue_runtime.engines.embedded.ops import DynamicRecord  # noqa: E402
from openglue_runtime.engines.embedded.plan import ErrorThresholdExceeded  # noqa: E402


_ERROR_FIELDS = ("callsite", "msg", "stackTrace", "input", "bytesread", "source", "dynamicRecord")

def _stage_kw(transformation_ctx, stageThreshold, totalThreshold):
    return {"transformation_ctx": transformation_ctx or "", "stage_threshold": stageThreshold or 0,
            "total_threshold": totalThreshold or 0}


class DynamicFrame:
    """A distributed-in-spirit collection of self-describing records (Glue's DynamicFrame)."""

    def __init__(self, plan, glue_ctx, name: str = "", transformation_ctx: str = ""):
        self._plan = plan
        self.glue_ctx = glue_ctx
        self.name = name
        self.transformation_ctx = transformation_ctx

    # ---------------------------------------------------------------- construction

    @property
    def _engine(self):
        return self.glue_ctx._engine

    def _derive(self, plan, transformation_ctx: str = "", name: Optional[str] = None) -> "DynamicFrame":
        return DynamicFrame(plan, self.glue_ctx, self.name if name is None else name,
                            transformation_ctx)

    def _step(self, op_name: str, transformation_ctx="", stageThreshold=0, totalThreshold=0,
              **args) -> "DynamicFrame":
        plan = self._engine.transform(self._plan, op_name,
                                      **_stage_kw(transformation_ctx, stageThreshold, totalThreshold),
                                      **args)
        return self._derive(plan, transformation_ctx)

    @classmethod
    def from_arrow(cls, table, glue_ctx, name: str = "") -> "DynamicFrame":
        """OpenGlue extension: a frame over a pyarrow Table (or RecordBatch)."""
        return cls(glue_ctx._engine.from_arrow(table), glue_ctx, name)

    @classmethod
    def from_records(cls, records: Iterable[dict], glue_ctx, name: str = "",
                     schema: Optional[gt.StructType] = None) -> "DynamicFrame":
        """OpenGlue extension: a frame over Python dicts (types inferred as Glue does)."""
        return cls(glue_ctx._engine.from_records(list(records), schema), glue_ctx, name)

    @staticmethod
    def fromDF(dataframe, glue_ctx, name=""):
        """A DynamicFrame over the rows of a Spark DataFrame (the Spark engine; the rows are
        collected through Arrow, see openglue_runtime/engines/spark/bridge.py)."""
        if not glue_ctx._spark_enabled():
            raise spark_unavailable("DynamicFrame.fromDF()")
        from openglue_runtime.engines.spark.bridge import from_spark, unique_struct_fields
        dataframe = unique_struct_fields(dataframe)
        if hasattr(glue_ctx._engine, "from_spark"):
            return DynamicFrame(glue_ctx._engine.from_spark(dataframe), glue_ctx, name or "")
        return DynamicFrame.from_arrow(from_spark(dataframe), glue_ctx, name or "")

    def toDF(self, options=None):
        """The frame as a Spark DataFrame with its schema (the Spark engine); choice columns
        become structs with one field per type, as in Glue. `options`: ResolveOption(path,
        action) items resolve those choices first (`resolveChoice(specs=[(path, action)])`)."""
        if not self.glue_ctx._spark_enabled():
            raise spark_unavailable("DynamicFrame.toDF()")
        from openglue_runtime.engines.spark.bridge import to_spark
        frame = self
        specs = []
        for option in options or []:
            if not isinstance(option, ResolveOption):
                raise TypeError("toDF(options): each option must be a ResolveOption(path, "
                                "action), not {}".format(type(option).__name__))
            specs.append((option.path, option.action))
        if specs:
            frame = frame.resolveChoice(specs=specs)
        if hasattr(self._engine, "to_spark"):
            return self._engine.to_spark(frame._plan)
        return to_spark(frame, self.glue_ctx.spark_session)

    # ---------------------------------------------------------------- actions

    def count(self) -> int:
        return self._engine.count(self._plan)

    def schema(self) -> gt.StructType:
        return self._engine.schema(self._plan)

    def printSchema(self) -> None:
        print(format_schema(self.schema()))

    def show(self, num_rows: int = 20) -> None:
        for rec in self._engine.head(self._plan, num_rows):
            print(json.dumps(_jsonable(rec), ensure_ascii=False))

    def to_arrow(self):
        """OpenGlue extension: the frame's rows as a pyarrow Table (choices as dense unions)."""
        return self._engine.to_arrow(self._plan)

    def to_pandas(self):
        """OpenGlue extension: the frame's rows as a pandas DataFrame."""
        return self.to_arrow().to_pandas()

    def getNumPartitions(self) -> int:
        return self._engine.num_partitions(self._plan)

    def getName(self) -> str:
        return self.name

    # -- error records

    def errorsCount(self) -> int:
        return len(self._engine.errors(self._plan)[0])

    def stageErrorsCount(self) -> int:
        return len(self._engine.errors(self._plan)[1])

    def errorsAsDynamicFrame(self) -> "DynamicFrame":
        errors = self._engine.errors(self._plan)[0]
        recs = [{"error": {k: e.get(k) for k in _ERROR_FIELDS}} for e in errors]
        # Glue's error record: callsite, msg, stackTrace, input, bytesread, source and the
        # dynamicRecord (typed as the records are, so inferred when there are any).
        schema = None if recs else gt.StructType([gt.Field("error", gt.StructType(
            [gt.Field(k, gt.LongType() if k == "bytesread" else gt.StringType())
             for k in _ERROR_FIELDS[:-1]] +
            [gt.Field("dynamicRecord", gt.StructType([]))]))])
        return DynamicFrame.from_records(recs, self.glue_ctx, self.name + "_errors", schema)

    def assertErrorThreshold(self) -> None:
        self._engine.errors(self._plan)

    # ---------------------------------------------------------------- transforms

    def apply_mapping(self, mappings, case_sensitive: bool = False, transformation_ctx: str = "",
                      info: str = "", stageThreshold: int = 0, totalThreshold: int = 0):
        return self._step("apply_mapping", transformation_ctx, stageThreshold, totalThreshold,
                          mappings=mappings, case_sensitive=case_sensitive)

    def select_fields(self, paths, transformation_ctx: str = "", info: str = "",
                      stageThreshold: int = 0, totalThreshold: int = 0):
        return self._step("select_fields", transformation_ctx, stageThreshold, totalThreshold,
                          paths=_as_list(paths))

    def drop_fields(self, paths, transformation_ctx: str = "", info: str = "",
                    stageThreshold: int = 0, totalThreshold: int = 0):
        return self._step("drop_fields", transformation_ctx, stageThreshold, totalThreshold,
                          paths=_as_list(paths))

    def rename_field(self, oldName: str, newName: str, transformation_ctx: str = "", info: str = "",
                     stageThreshold: int = 0, totalThreshold: int = 0):
        return self._step("rename_field", transformation_ctx, stageThreshold, totalThreshold,
                          old=oldName, new=newName)

    def resolveChoice(self, specs=None, choice: str = "", database: Optional[str] = None,
                      table_name: Optional[str] = None, transformation_ctx: str = "",
                      info: str = "", stageThreshold: int = 0, totalThreshold: int = 0,
                      catalog_id: Optional[str] = None):
        catalog_types = {}
        actions = [a for _, a in (specs or [])] + ([choice] if choice else [])
        if any(a.strip().lower() == "match_catalog" for a in actions):
            if not database or not table_name:
                raise ValueError("resolveChoice with match_catalog needs database and table_name")
            from openglue_runtime import catalog  # runtime helper's module
            src = catalog.resolve_source(database, table_name, catalog_id=catalog_id)
            for n, t in list(src.schema_columns) + list(src.partition_keys):
                catalog_types[n] = gt.type_from_name(t)
                catalog_types[n.lower()] = catalog_types[n]
        return self._step("resolve_choice", transformation_ctx, stageThreshold, totalThreshold,
                          specs=[tuple(s) for s in specs] if specs else None, choice=choice,
                          catalog_types=catalog_types)

    resolve_choice = resolveChoice

    def filter(self, f: Callable, transformation_ctx: str = "", info: str = "",
               stageThreshold: int = 0, totalThreshold: int = 0):
        return self._step("filter", transformation_ctx, stageThreshold, totalThreshold, f=f)

    def map(self, f: Callable, preservesPartitioning: bool = False, transformation_ctx: str = "",
            info: str = "", stageThreshold: int = 0, totalThreshold: int = 0):
        return self._step("map", transformation_ctx, stageThreshold, totalThreshold, f=f)

    def join(self, paths1, paths2, frame2: "DynamicFrame", transformation_ctx: str = "",
             info: str = "", stageThreshold: int = 0, totalThreshold: int = 0):
        return self._step("join", transformation_ctx, stageThreshold, totalThreshold,
                          keys1=_as_list(paths1), keys2=_as_list(paths2), other=_Lazy(frame2))

    def union(self, other_frame: "DynamicFrame", transformation_ctx: str = "", info: str = "",
              stageThreshold: int = 0, totalThreshold: int = 0):
        return self._step("union", transformation_ctx, stageThreshold, totalThreshold,
                          others=[_Lazy(other_frame)])

    def mergeDynamicFrame(self, stage_dynamic_frame: "DynamicFrame", primary_keys,
                          transformation_ctx: str = "", options=None, info: str = "",
                          stageThreshold: int = 0, totalThreshold: int = 0):
        return self._step("merge", transformation_ctx, stageThreshold, totalThreshold,
                          stage=_Lazy(stage_dynamic_frame), primary_keys=_as_list(primary_keys))

    def unnest(self, transformation_ctx: str = "", info: str = "", stageThreshold: int = 0,
               totalThreshold: int = 0):
        return self._step("unnest", transformation_ctx, stageThreshold, totalThreshold)

    def unbox(self, path: str, format: str, transformation_ctx: str = "", info: str = "",
              stageThreshold: int = 0, totalThreshold: int = 0, **options):
        return self._step("unbox", transformation_ctx, stageThreshold, totalThreshold,
                          path=path, fmt=format)

    def drop_null_fields(self, transformation_ctx: str = "", info: str = "",
                         stageThreshold: int = 0, totalThreshold: int = 0):
        return self._step("drop_null_fields", transformation_ctx, stageThreshold, totalThreshold)

    dropNullFields = drop_null_fields

    def repartition(self, num_partitions: int, transformation_ctx: str = "", info: str = "",
                    stageThreshold: int = 0, totalThreshold: int = 0):
        return self._step("repartition", transformation_ctx, stageThreshold, totalThreshold,
                          n=num_partitions)

    def coalesce(self, num_partitions: int, shuffle: bool = False, transformation_ctx: str = "",
                 info: str = "", stageThreshold: int = 0, totalThreshold: int = 0):
        return self._step("repartition", transformation_ctx, stageThreshold, totalThreshold,
                          n=min(int(num_partitions), self.getNumPartitions()) if not shuffle
                          else num_partitions)

    def split_fields(self, paths, name1: str, name2: str, transformation_ctx: str = "",
                     info: str = "", stageThreshold: int = 0, totalThreshold: int = 0):
        paths = _as_list(paths)
        first = self.select_fields(paths, transformation_ctx, info, stageThreshold, totalThreshold)
        second = self.drop_fields(paths, transformation_ctx, info, stageThreshold, totalThreshold)
        first.name, second.name = name1, name2
        return DynamicFrameCollection({name1: first, name2: second}, self.glue_ctx)

    def split_rows(self, comparison_dict, name1: str, name2: str, transformation_ctx: str = "",
                   info: str = "", stageThreshold: int = 0, totalThreshold: int = 0):
        a, b = self._engine.split_rows(self._plan, comparison_dict,
                                       **_stage_kw(transformation_ctx, stageThreshold, totalThreshold))
        return DynamicFrameCollection({name1: self._derive(a, transformation_ctx, name1),
                                       name2: self._derive(b, transformation_ctx, name2)},
                                      self.glue_ctx)

    def spigot(self, path: str, options=None, transformation_ctx: str = "", info: str = "",
               stageThreshold: int = 0, totalThreshold: int = 0):
        frame = self._step("spigot", transformation_ctx, stageThreshold, totalThreshold,
                           options=dict(options or {}))
        frame._spigot_uris = self._engine.write_sample(frame._plan, path)
        return frame

    def relationalize(self, root_table_name: str, staging_path: str = "", options=None,
                      transformation_ctx: str = "", info: str = "", stageThreshold: int = 0,
                      totalThreshold: int = 0):
        """The frame flattened into a root table and one table per array (`staging_path` is
        accepted; the embedded engine keeps the tables in memory instead)."""
        plans = self._engine.relationalize(self._plan, root_table_name)
        return DynamicFrameCollection(
            {name: DynamicFrame(p, self.glue_ctx, name, transformation_ctx)
             for name, p in plans.items()}, self.glue_ctx)

    # ---------------------------------------------------------------- Python niceties

    def __repr__(self) -> str:
        return "DynamicFrame(name={!r}, engine={})".format(self.name, self._engine.name)

    def __getattr__(self, item):
        # DataFrame methods on a DynamicFrame are a Spark-API use; say so clearly.
        if item in _DATAFRAME_ONLY:
            raise spark_unavailable("DataFrame method .{}()".format(item))
        raise AttributeError("'DynamicFrame' object has no attribute {!r}".format(item))


_DATAFRAME_ONLY = {"select", "withColumn", "groupBy", "agg", "createOrReplaceTempView", "where",
                   "withColumnRenamed", "collect", "rdd", "cache", "persist", "write",
                   "printschema", "orderBy", "sort", "distinct", "dropDuplicates", "limit"}


class _Lazy:
    """Another frame's plan, executed when the step that needs it runs."""

    def __init__(self, frame: DynamicFrame):
        self.frame = frame

    def to_table(self):
        return self.frame._engine.to_arrow(self.frame._plan)


def _as_list(v) -> List:
    if isinstance(v, str):
        return [v]
    return list(v)


def _jsonable(v):
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", "replace")
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


def format_schema(schema: gt.StructType) -> str:
    """Glue's printSchema text: `root` then `|-- name: type` lines, nested members indented."""
    lines = ["root"]

    def emit(dt: gt.DataType, depth: int):
        indent = "|    " * depth
        if isinstance(dt, gt.StructType):
            for f in dt.fields:
                lines.append("{}|-- {}: {}".format(indent, f.name, f.dataType.typeName()))
                emit(f.dataType, depth + 1)
        elif isinstance(dt, gt.ArrayType):
            lines.append("{}|-- element: {}".format(indent, dt.elementType.typeName()))
            emit(dt.elementType, depth + 1)
        elif isinstance(dt, gt.MapType):
            lines.append("{}|-- keyType: {}".format(indent, dt.keyType.typeName()))
            lines.append("{}|-- valueType: {}".format(indent, dt.valueType.typeName()))
            emit(dt.valueType, depth + 1)
        elif isinstance(dt, gt.ChoiceType):
            for c in dt.choices.values():
                lines.append("{}|-- {}".format(indent, c.typeName()))
                emit(c, depth + 1)
    emit(schema, 0)
    return "\n".join(lines) + "\n"


class ResolveOption:
    """How toDF() resolves one choice column: `ResolveOption("a.b", "make_cols")` (any
    resolveChoice action: cast:<type>, project:<type>, make_cols, make_struct). `target` is
    accepted for compatibility and unused."""

    def __init__(self, path: str, action: str, target=None):
        self.path = path
        self.action = action
        self.target = target

    def __repr__(self) -> str:
        return "ResolveOption({!r}, {!r})".format(self.path, self.action)


class DynamicFrameCollection:
    """A dict of named DynamicFrames (what relationalize, split_fields and split_rows return)."""

    def __init__(self, dynamic_frames: Dict[str, DynamicFrame], glue_ctx):
        self._frames = dict(dynamic_frames)
        self.glue_ctx = glue_ctx

    def __getitem__(self, key: str) -> DynamicFrame:
        return self._frames[key]

    def __len__(self) -> int:
        return len(self._frames)

    def __iter__(self):
        return iter(self._frames)

    def __contains__(self, key) -> bool:
        return key in self._frames

    def keys(self):
        return self._frames.keys()

    def values(self):
        return self._frames.values()

    def items(self):
        return self._frames.items()

    def select(self, key: str, transformation_ctx: str = "") -> DynamicFrame:
        if key not in self._frames:
            raise KeyError("no frame named {!r} in the collection (keys: {})".format(
                key, ", ".join(sorted(self._frames))))
        return self._frames[key]

    def map(self, callable: Callable, transformation_ctx: str = "") -> "DynamicFrameCollection":
        out = {}
        for k, frame in self._frames.items():
            res = callable(frame, transformation_ctx + ":" + k if transformation_ctx else k)
            if not isinstance(res, DynamicFrame):
                raise TypeError("DynamicFrameCollection.map: the function must return a "
                                "DynamicFrame, got {}".format(type(res).__name__))
            out[k] = res
        return DynamicFrameCollection(out, self.glue_ctx)

    def flatMap(self, f: Callable, transformation_ctx: str = "") -> "DynamicFrameCollection":
        out = {}
        for k, frame in self._frames.items():
            res = f(frame, transformation_ctx + ":" + k if transformation_ctx else k)
            if isinstance(res, DynamicFrameCollection):
                for sub, fr in res.items():
                    out["{}_{}".format(k, sub)] = fr
            elif isinstance(res, DynamicFrame):
                out[k] = res
            else:
                raise TypeError("DynamicFrameCollection.flatMap: the function must return a "
                                "DynamicFrame or a DynamicFrameCollection")
        return DynamicFrameCollection(out, self.glue_ctx)

    def __repr__(self) -> str:
        return "DynamicFrameCollection({})".format(list(self._frames))


class DynamicFrameReader:
    """`glueContext.create_dynamic_frame`: from_options, from_catalog."""

    def __init__(self, glue_context):
        self._glue_context = glue_context

    def from_options(self, connection_type: str = "s3", connection_options=None, format=None,
                     format_options=None, transformation_ctx: str = "", push_down_predicate: str = "",
                     **kwargs) -> DynamicFrame:
        return self._glue_context.create_dynamic_frame_from_options(
            connection_type, connection_options, format, format_options, transformation_ctx,
            push_down_predicate, **kwargs)

    def from_catalog(self, database: Optional[str] = None, table_name: Optional[str] = None,
                     redshift_tmp_dir: str = "", transformation_ctx: str = "",
                     push_down_predicate: str = "", additional_options=None,
                     catalog_id: Optional[str] = None, name_space: Optional[str] = None,
                     **kwargs) -> DynamicFrame:
        return self._glue_context.create_dynamic_frame_from_catalog(
            database or name_space, table_name, redshift_tmp_dir, transformation_ctx,
            push_down_predicate, additional_options, catalog_id, **kwargs)

    def from_rdd(self, data, name, schema=None, sample_ratio=None, transformation_ctx="",
                 **kwargs) -> DynamicFrame:
        return self._glue_context.create_dynamic_frame_from_rdd(
            data, name, schema, sample_ratio, transformation_ctx, **kwargs)


class DynamicFrameWriter:
    """`glueContext.write_dynamic_frame`: from_options, from_catalog."""

    def __init__(self, glue_context):
        self._glue_context = glue_context

    def from_options(self, frame: DynamicFrame, connection_type: str = "s3",
                     connection_options=None, format=None, format_options=None,
                     transformation_ctx: str = "") -> DynamicFrame:
        return self._glue_context.write_dynamic_frame_from_options(
            frame, connection_type, connection_options, format, format_options, transformation_ctx)

    def from_catalog(self, frame: DynamicFrame, database: Optional[str] = None,
                     table_name: Optional[str] = None, redshift_tmp_dir: str = "",
                     transformation_ctx: str = "", additional_options=None,
                     catalog_id: Optional[str] = None, name_space: Optional[str] = None,
                     **kwargs) -> DynamicFrame:
        return self._glue_context.write_dynamic_frame_from_catalog(
            frame, database or name_space, table_name, redshift_tmp_dir, transformation_ctx,
            additional_options, catalog_id)

    def from_jdbc_conf(self, frame: DynamicFrame, catalog_connection: str, connection_options=None,
                       redshift_tmp_dir: str = "", transformation_ctx: str = "",
                       catalog_id: Optional[str] = None) -> DynamicFrame:
        return self._glue_context.write_dynamic_frame_from_jdbc_conf(
            frame, catalog_connection, connection_options, redshift_tmp_dir, transformation_ctx,
            catalog_id)


def _warn(msg: str) -> None:
    print("WARN awsglue: " + msg, file=sys.stderr)
