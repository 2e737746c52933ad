"""GlueContext: sources, sinks, catalog integration and the flat aliases of AWS Glue's API."""
import datetime
import sys
import time
from typing import Dict, List, Optional

from openglue_runtime import catalog_connection as _catalog_connection
from openglue_runtime import storage_classes as _storage_classes
from openglue_runtime.run_state import bookmark_options, select_and_register, spark_unavailable
from openglue_runtime.engines.embedded import EmbeddedEngine
from openglue_runtime.engines.spark import sql_context as _sql_context
from openglue_runtime.sinks import (FILE_CONNECTIONS as _FILE_CONNECTIONS,
                                    JDBC_CONNECTIONS as _JDBC_CONNECTIONS, catalog as _catalog,
                                    catalog_columns as _catalog_columns, jdbc as _jdbc,
                                    partition_names as _partition_names,
                                    write_files as _write_files)
from awsglue.data_sink import DataSink
from awsglue.data_source import DataSource
from awsglue.dataframereader import DataFrameReader
from awsglue.dataframewriter import DataFrameWriter
from awsglue.dynamicframe import DynamicFrame, DynamicFrameReader, DynamicFrameWriter

__all__ = ["GlueContext", "DataSource", "DataSink", "GlueLogger"]

_PURGE_DEFAULT_HOURS = 168


class GlueLogger:
    """`glueContext.get_logger()`: info/warn/error lines on stderr, as Glue's log4j lines read."""

    def __init__(self, stream=None):
        self._stream = stream

    def _log(self, level: str, msg) -> None:
        now = datetime.datetime.now()
        stamp = now.strftime("%Y-%m-%d %H:%M:%S") + ",{:03d}".format(now.microsecond // 1000)
        out = self._stream or sys.stderr
        out.write("{} {} [main] glue: {}\n".format(stamp, level, msg))
        out.flush()

    def info(self, msg) -> None:
        self._log("INFO", msg)

    def warn(self, msg) -> None:
        self._log("WARN", msg)

    warning = warn

    def error(self, msg) -> None:
        self._log("ERROR", msg)

    def debug(self, msg) -> None:
        self._log("DEBUG", msg)


def _spark_session():
    """What `glueContext.spark_session` is on the embedded engine: the pyspark stand-in's session
    (openglue_runtime.engines.embedded.spark_api), which allows the harmless preamble (`spark.conf.set`, `sparkContext`,
    `stop()`) and raises the clear Spark-API error on real use, never an AttributeError."""
    from openglue_runtime.engines.embedded.spark_api import get_spark_session
    return get_spark_session()


def _paths(connection_options: dict) -> List[str]:
    paths = connection_options.get("paths", connection_options.get("path"))
    if paths is None:
        raise ValueError("connection_options needs \"paths\" (a list of s3:// or local paths)")
    if isinstance(paths, str):
        return [paths]
    return [str(p) for p in paths]


class GlueContext(_sql_context.SQLContext):
    """The entry point of a Glue script: `GlueContext(SparkContext.getOrCreate())`.

    Glue's own API (sources, sinks, DynamicFrame transforms, bookmarks) runs on `self._engine`
    (the embedded engine) on both engines. On the Spark engine the SparkContext is a real one,
    `spark_session` is its SparkSession, toDF/fromDF bridge to DataFrames, and the context is a
    pyspark.sql.SQLContext, as AWS's is (`glueContext.sql(...)`, `.table`, `.read`, ...); on the
    embedded engine it is an instance of the pyspark stand-in's SQLContext, whose members raise
    SparkApiUnavailable (openglue_runtime/engines/spark/sql_context.py).
    """

    def __init__(self, sparkContext=None, engine=None, **options):
        from openglue_runtime.engines.spark import engine as spark_engine
        # In a job run: decides `auto` if the script has not imported pyspark yet, and says
        # which engine runs it in the run's log.
        self._run_engine = spark_engine.prepare()
        self._sc = sparkContext
        self._spark = None
        if self._spark_enabled():
            session = self.spark_session
            _sql_context.init(self, self._sc, session)
        self._engine = engine or self._default_engine()
        self._options = options
        self._logger = GlueLogger()
        self.create_dynamic_frame = DynamicFrameReader(self)
        self.write_dynamic_frame = DynamicFrameWriter(self)
        self.create_data_frame = DataFrameReader(self)
        self.write_data_frame = DataFrameWriter(self)
        self.written: Dict[str, List[str]] = {}

    def _default_engine(self):
        """The Spark engine's native frames on Spark (unless `--spark-frames driver`), else the
        embedded engine."""
        if self._spark_enabled():
            from openglue_runtime.engines.spark.engine import announce_frames, frames_mode
            mode = frames_mode()
            announce_frames(mode)
            if mode == "native":
                from openglue_runtime.engines.spark.frames import SparkEngine
                return SparkEngine(lambda: self.spark_session)
        return EmbeddedEngine()

    # ---------------------------------------------------------------- Spark-side API

    def _spark_enabled(self) -> bool:
        """Whether this context bridges to Spark: the run's engine is Spark, or (outside a job
        run) it was built on a real pyspark SparkContext."""
        if self._run_engine:
            return self._run_engine == "spark"
        from openglue_runtime.engines.embedded.spark_api import is_standin
        return self._sc is not None and not is_standin(self._sc) and hasattr(self._sc, "_jsc")

    @property
    def spark_session(self):
        """The SparkSession: the real one on the Spark engine (on this context's SparkContext,
        made with the run's settings if the script made none); the stand-in's on the embedded
        engine."""
        if not self._spark_enabled():
            return _spark_session()
        if self._spark is None:
            from pyspark import SparkContext
            from pyspark.sql import SparkSession
            if self._sc is None or not hasattr(self._sc, "_jsc"):
                self._sc = SparkContext.getOrCreate()
            # The process's session (one the script built with the builder, else a new one on
            # self._sc), so temporary views and SQL settings are shared with the script's.
            self._spark = SparkSession.builder.getOrCreate()
        return self._spark

    @spark_session.setter
    def spark_session(self, session) -> None:
        self._spark = session

    sparkSession = spark_session

    def _data_frame(self, frame: DynamicFrame):
        if not self._spark_enabled():
            raise spark_unavailable("glueContext.create_data_frame")
        return frame.toDF()

    def create_data_frame_from_options(self, connection_type: str = "s3", connection_options=None,
                                       format=None, format_options=None,
                                       transformation_ctx: str = "", **kwargs):
        """A Spark DataFrame from a source (the Spark engine): the DynamicFrame source of the
        same arguments, then toDF(), so options and bookmarks behave as they do there."""
        if not self._spark_enabled():
            raise spark_unavailable("glueContext.create_data_frame_from_options()")
        return self._data_frame(self.create_dynamic_frame_from_options(
            connection_type, connection_options, format, format_options, transformation_ctx,
            **kwargs))

    def create_data_frame_from_catalog(self, database: Optional[str] = None,
                                       table_name: Optional[str] = None,
                                       redshift_tmp_dir: str = "", transformation_ctx: str = "",
                                       push_down_predicate: str = "", additional_options=None,
                                       catalog_id: Optional[str] = None, **kwargs):
        """A Spark DataFrame from a catalog table (the Spark engine), through
        create_dynamic_frame_from_catalog and toDF()."""
        if not self._spark_enabled():
            raise spark_unavailable("glueContext.create_data_frame_from_catalog()")
        return self._data_frame(self.create_dynamic_frame_from_catalog(
            database, table_name, redshift_tmp_dir, transformation_ctx, push_down_predicate,
            additional_options, catalog_id, **kwargs))

    def create_dynamic_frame_from_rdd(self, data, name: str, schema=None, sample_ratio=None,
                                      transformation_ctx: str = "", **kwargs) -> DynamicFrame:
        """A DynamicFrame from an RDD (or a list) of rows (the Spark engine)."""
        if not self._spark_enabled():
            raise spark_unavailable("glueContext.create_dynamic_frame_from_rdd()")
        df = self.spark_session.createDataFrame(data, schema, sample_ratio)
        return DynamicFrame.fromDF(df, self, name)

    def write_data_frame_from_catalog(self, frame, database: Optional[str] = None,
                                      table_name: Optional[str] = None,
                                      redshift_tmp_dir: str = "", transformation_ctx: str = "",
                                      additional_options=None,
                                      catalog_id: Optional[str] = None, **kwargs):
        """Writes a Spark DataFrame into a catalog table (the Spark engine): fromDF, then the
        DynamicFrame sink of the same arguments."""
        if not self._spark_enabled():
            raise spark_unavailable("glueContext.write_data_frame_from_catalog()")
        return self.write_dynamic_frame_from_catalog(
            DynamicFrame.fromDF(frame, self, table_name or ""), database, table_name,
            redshift_tmp_dir, transformation_ctx, additional_options, catalog_id, **kwargs)

    def write_data_frame_from_options(self, frame, connection_type: str = "s3",
                                      connection_options=None, format=None, format_options=None,
                                      transformation_ctx: str = ""):
        """Writes a Spark DataFrame to a sink (the Spark engine): fromDF, then the DynamicFrame
        sink of the same arguments."""
        if not self._spark_enabled():
            raise spark_unavailable("glueContext.write_data_frame_from_options()")
        return self.write_dynamic_frame_from_options(
            DynamicFrame.fromDF(frame, self, ""), connection_type, connection_options, format,
            format_options, transformation_ctx)

    def get_logger(self) -> GlueLogger:
        return self._logger

    # ---------------------------------------------------------------- reading

    def create_dynamic_frame_from_options(self, connection_type: str = "s3", connection_options=None,
                                          format=None, format_options=None,
                                          transformation_ctx: str = "", push_down_predicate: str = "",
                                          **kwargs) -> DynamicFrame:
        connection_options = dict(connection_options or {})
        ctype = (connection_type or "s3").lower()
        if ctype in _JDBC_CONNECTIONS:
            return self._read_jdbc(_jdbc().resolve(ctype, connection_options), connection_options,
                                   transformation_ctx, connection_options.get("dbtable", ""))
        if _catalog_connection.is_source(ctype):
            plan = self._engine.from_records(_catalog_connection.read_records(connection_options),
                                             _catalog_connection.FRAME_SCHEMA)
            return DynamicFrame(plan, self, transformation_ctx or "", transformation_ctx)
        if ctype not in _FILE_CONNECTIONS:
            raise ValueError(self._unsupported(connection_type, "source"))
        if not format:
            raise ValueError("create_dynamic_frame.from_options needs format= (csv, json, parquet, "
                             "glueparquet or orc)")
        paths = _paths(connection_options)
        listing = self._engine.list_files(paths, connection_options)
        listing = select_and_register(transformation_ctx, {
            "type": ctype, "paths": paths, "format": format,
            **bookmark_options(connection_options)}, listing)
        plan = self._engine.read_files(listing, format, dict(format_options or {}),
                                       connection_options)
        return DynamicFrame(plan, self, transformation_ctx or "", transformation_ctx)

    def create_dynamic_frame_from_catalog(self, database: Optional[str] = None,
                                          table_name: Optional[str] = None,
                                          redshift_tmp_dir: str = "", transformation_ctx: str = "",
                                          push_down_predicate: str = "", additional_options=None,
                                          catalog_id: Optional[str] = None, **kwargs) -> DynamicFrame:
        if not database or not table_name:
            raise ValueError("from_catalog needs database and table_name")
        additional_options = dict(additional_options or {})
        cat = _catalog()
        try:
            src = cat.resolve_source(
                database, table_name, push_down_predicate=push_down_predicate or "",
                catalog_partition_predicate=additional_options.get("catalogPartitionPredicate", "")
                or "", additional_options=additional_options, catalog_id=catalog_id)
        except getattr(cat, "JdbcCatalogTable", ()) as jdbc_table:
            target, options = _jdbc().catalog_target(jdbc_table.table, additional_options,
                                                     catalog_id)
            return self._read_jdbc(target, options, transformation_ctx, table_name)
        parts, listing = [], []
        list_opts = {k: additional_options[k] for k in ("recurse", "exclusions")
                     if k in additional_options}
        for location, values in src.paths:
            files = self._engine.list_files([location], list_opts)
            listing.extend(files)
            parts.append(([u for u, _, _ in files], dict(values)))
        kept = select_and_register(transformation_ctx, {
            "type": "s3", "database": database, "table": table_name,
            "location": getattr(src, "location", None),
            "paths": [loc for loc, _ in src.paths], "format": src.format,
            "push_down_predicate": push_down_predicate or None,
            "catalogPartitionPredicate": additional_options.get("catalogPartitionPredicate"),
            **bookmark_options(additional_options)}, listing)
        if len(kept) != len(listing) or kept != listing:
            keep = {u for u, _, _ in kept}
            parts = [([u for u in files if u in keep], values) for files, values in parts]
            listing = kept
        fmt_opts = dict(src.format_options or {})
        for k in ("separator", "quoteChar", "escaper", "withHeader", "skipFirst", "multiLine",
                  "jsonPath", "compressionType"):
            if k in additional_options:
                fmt_opts[k] = additional_options[k]
        plan = self._engine.read_catalog(parts, listing, src.format, fmt_opts,
                                         list(src.schema_columns), list(src.partition_keys))
        return DynamicFrame(plan, self, table_name, transformation_ctx)

    def _unsupported(self, connection_type: str, role: str) -> str:
        """The error text for a connection type this run's engine has no `role` (source or
        sink) for."""
        engine = "Spark" if self._spark_enabled() else "embedded"
        catalog = (_catalog_connection.SOURCE_NAME if role == "source"
                   else _catalog_connection.SINK_TYPE)
        return ("connection_type {!r} is not supported as a {} by OpenGlue's {} engine "
                "(supported: s3, file, postgresql, mysql, mariadb, {})".format(
                    connection_type, role, engine, catalog))

    def _read_jdbc(self, target, options: dict, transformation_ctx: str, name: str) -> DynamicFrame:
        if hasattr(self._engine, "read_jdbc"):  # Spark: the queries run in Spark tasks
            return DynamicFrame(self._engine.read_jdbc(target, options, transformation_ctx or ""),
                                self, name or target.dbtable, transformation_ctx)
        table = _jdbc().read(target, options, transformation_ctx or "")
        return DynamicFrame(self._engine.from_arrow(table), self, name or target.dbtable,
                            transformation_ctx)

    def getCatalogSource(self, database: Optional[str] = None, table_name: Optional[str] = None,
                         redshift_tmp_dir: str = "", transformation_ctx: str = "",
                         push_down_predicate: str = "", additional_options=None,
                         catalog_id: Optional[str] = None, **kwargs):
        options = dict(additional_options or {})
        options.update(database=database, table_name=table_name)
        return DataSource(self, "catalog", None, transformation_ctx, push_down_predicate, options)

    def getSource(self, connection_type: str, format: Optional[str] = None,
                  transformation_ctx: str = "", push_down_predicate: str = "", **options):
        return DataSource(self, connection_type, format, transformation_ctx, push_down_predicate,
                          options)

    # ---------------------------------------------------------------- writing

    def write_dynamic_frame_from_options(self, frame: DynamicFrame, connection_type: str = "s3",
                                         connection_options=None, format=None, format_options=None,
                                         transformation_ctx: str = "") -> DynamicFrame:
        connection_options = dict(connection_options or {})
        ctype = (connection_type or "s3").lower()
        if ctype in _JDBC_CONNECTIONS:
            target = _jdbc().resolve(ctype, connection_options)
            return self._write_jdbc(frame, target, connection_options, transformation_ctx)
        if _catalog_connection.is_sink(ctype):
            _catalog_connection.write_records(_catalog_connection.table_records(frame.to_arrow()),
                                              connection_options)
            return frame
        if ctype not in _FILE_CONNECTIONS:
            raise ValueError(self._unsupported(connection_type, "sink"))
        path = connection_options.get("path")
        if not path:
            raise ValueError("write_dynamic_frame.from_options needs connection_options[\"path\"]")
        uris = _write_files(self._engine, frame, path, format or "json",
                            dict(format_options or {}),
                            _partition_names(connection_options.get("partitionKeys")),
                            connection_options)
        self.written[transformation_ctx or path] = uris
        return frame

    def write_dynamic_frame_from_catalog(self, frame: DynamicFrame, database: Optional[str] = None,
                                         table_name: Optional[str] = None,
                                         redshift_tmp_dir: str = "", transformation_ctx: str = "",
                                         additional_options=None,
                                         catalog_id: Optional[str] = None, **kwargs) -> DynamicFrame:
        if not database or not table_name:
            raise ValueError("write_dynamic_frame.from_catalog needs database and table_name")
        additional_options = dict(additional_options or {})
        cat = _catalog()
        try:
            sink = cat.resolve_sink(database, table_name, catalog_id=catalog_id)
        except getattr(cat, "JdbcCatalogTable", ()) as jdbc_table:
            target, options = _jdbc().catalog_target(jdbc_table.table, additional_options,
                                                     catalog_id)
            return self._write_jdbc(frame, target, options, transformation_ctx)
        pkeys = _partition_names(additional_options.get("partitionKeys")
                                 or getattr(sink, "partition_keys", None))
        uris = _write_files(self._engine, frame, sink.path, sink.format,
                            dict(getattr(sink, "format_options", None) or {}), pkeys,
                            additional_options)
        self.written[transformation_ctx or "{}.{}".format(database, table_name)] = uris
        columns, keys = _catalog_columns(frame.schema(), pkeys)
        enable = str(additional_options.get("enableUpdateCatalog", "false")).lower() == "true"
        cat.update_after_write(database, table_name, uris, keys, columns,
                               additional_options.get("updateBehavior", "UPDATE_IN_DATABASE"),
                               enable)
        return frame

    def _write_jdbc(self, frame: DynamicFrame, target, options: dict,
                    transformation_ctx: str) -> DynamicFrame:
        table = self._engine.to_arrow(frame._plan)
        n = _jdbc().write(target, table, options)
        key = transformation_ctx or "{}:{}".format(target.label, options.get("dbtable")
                                                   or target.dbtable)
        self.written[key] = ["{}/{}".format(target.url, options.get("dbtable") or target.dbtable)]
        self._logger.info("wrote {} rows into {} on {}".format(
            n, options.get("dbtable") or target.dbtable, target.url))
        return frame

    def write_dynamic_frame_from_jdbc_conf(self, frame: DynamicFrame, catalog_connection: str,
                                           connection_options=None, redshift_tmp_dir: str = "",
                                           transformation_ctx: str = "",
                                           catalog_id: Optional[str] = None) -> DynamicFrame:
        """Writes into a JDBC table of the Glue connection `catalog_connection`:
        connection_options `dbtable` (required) and `database` (replaces the URL's database)."""
        options = dict(connection_options or {})
        target = _jdbc().resolve("", options, catalog_id=catalog_id,
                                 connection_name=catalog_connection,
                                 database=options.get("database"))
        return self._write_jdbc(frame, target, options, transformation_ctx)

    write_from_jdbc_conf = write_dynamic_frame_from_jdbc_conf

    def getJDBCSink(self, catalog_connection: str, options=None, redshift_tmp_dir: str = "",
                    transformation_ctx: str = "", catalog_id: Optional[str] = None):
        sink = DataSink(self, "jdbc", None, transformation_ctx, dict(options or {}))
        sink._jdbc_conf = (catalog_connection, catalog_id)
        return sink

    def getCatalogSink(self, database: str, table_name: str, redshift_tmp_dir: str = "",
                       transformation_ctx: str = "", additional_options=None,
                       catalog_id: Optional[str] = None, **kwargs):
        sink = DataSink(self, "s3", None, transformation_ctx, dict(additional_options or {}))
        sink.setCatalogInfo(database, table_name, catalog_id)
        return sink

    def forEachBatch(self, frame, batch_function, options=None):
        raise NotImplementedError("streaming jobs (forEachBatch) are not supported by OpenGlue "
                                  "(on either engine)")

    def getSink(self, connection_type: str = "s3", format: Optional[str] = None,
                transformation_ctx: str = "", **options):
        return DataSink(self, connection_type, format, transformation_ctx, options)

    # ---------------------------------------------------------------- purging

    def purge_s3_path(self, s3_path: str, options=None, transformation_ctx: str = "") -> List[str]:
        """Deletes the objects under s3_path older than `retentionPeriod` hours (default 168);
        `excludeStorageClasses` is accepted (the embedded store has one class)."""
        options = dict(options or {})
        hours = float(options.get("retentionPeriod", _PURGE_DEFAULT_HOURS))
        cutoff_ms = int(time.time() * 1000 - hours * 3600 * 1000)
        return self._engine.purge(s3_path, cutoff_ms, options.get("exclusions"))

    def purge_table(self, database: str, table_name: str, options=None,
                    transformation_ctx: str = "", catalog_id: Optional[str] = None) -> List[str]:
        options = dict(options or {})
        src = _catalog().resolve_source(
            database, table_name, catalog_partition_predicate=options.get("partitionPredicate", ""),
            catalog_id=catalog_id)
        deleted: List[str] = []
        seen = set()
        for location, _ in src.paths:
            if location in seen:
                continue
            seen.add(location)
            deleted.extend(self.purge_s3_path(location, options, transformation_ctx))
        return deleted

    def transition_s3_path(self, s3_path: str, transition_to: str, options=None,
                           transformation_ctx: str = "") -> List[str]:
        """AWS's storage-class transition of the files under s3_path: validated as AWS does, a
        no-op on the files (the store has one class), the manifest written when asked
        (openglue_runtime/storage_classes.py). Returns the files selected."""
        return _storage_classes.transition(self._engine, [s3_path], transition_to, options or {})

    def transition_table(self, database: str, table_name: str, transition_to: str, options=None,
                         transformation_ctx: str = "", catalog_id: Optional[str] = None) -> List[str]:
        """transition_s3_path over the table's locations (its partitions' with
        `partitionPredicate`)."""
        options = dict(options or {})
        _storage_classes.check_transition(transition_to, options)
        src = _catalog().resolve_source(
            database, table_name, catalog_partition_predicate=options.get("partitionPredicate", ""),
            catalog_id=catalog_id)
        locations = list(dict.fromkeys(location for location, _ in src.paths))
        return _storage_classes.transition(self._engine, locations, transition_to, options)

    def add_ingestion_time_columns(self, dataFrame, timeGranularity: str = ""):
        """The DataFrame with Glue's ingest_year/_month/_day[/_hour[/_minute]] columns (a Spark
        DataFrame: on the embedded engine there is none, and this raises as Spark's API does)."""
        if not self._spark_enabled():
            raise spark_unavailable("GlueContext.add_ingestion_time_columns()")
        return _storage_classes.add_ingestion_time_columns(dataFrame, timeGranularity)

    # ---------------------------------------------------------------- aliases

    def write_from_options(self, frame_or_dfc, connection_type="s3", connection_options=None,
                           format=None, format_options=None, transformation_ctx=""):
        return self.write_dynamic_frame_from_options(frame_or_dfc, connection_type,
                                                     connection_options, format, format_options,
                                                     transformation_ctx)

    def write_from_catalog(self, frame_or_dfc, database=None, table_name=None, redshift_tmp_dir="",
                           transformation_ctx="", additional_options=None, catalog_id=None):
        return self.write_dynamic_frame_from_catalog(frame_or_dfc, database, table_name,
                                                     redshift_tmp_dir, transformation_ctx,
                                                     additional_options, catalog_id)

    def extract_jdbc_conf(self, connection_name, catalog_id=None):
        """The JDBC settings of a Glue connection, as Glue returns them: url (without the
        database), fullUrl, user, password, vendor and the SSL fields (openglue_runtime.jdbc)."""
        return _jdbc().extract_jdbc_conf(connection_name, catalog_id)


_sql_context.install_members(GlueContext, GlueContext._spark_enabled)
