"""`glueContext.getSink(...)`: a sink set up step by step (format, catalog table), written with
writeFrame()."""
from typing import Optional

from openglue_runtime import catalog_connection as _catalog_connection
from openglue_runtime.sinks import (JDBC_CONNECTIONS as _JDBC_CONNECTIONS, catalog as _catalog,
                                    catalog_columns as _catalog_columns,
                                    partition_names as _partition_names,
                                    write_files as _write_files)


class DataSink:
    """`glueContext.getSink(...)`: setFormat, setCatalogInfo, writeFrame."""

    def __init__(self, ctx, connection_type: str, fmt, transformation_ctx: str,
                 options: dict):
        self._ctx = ctx
        self._type = connection_type
        self._format = fmt
        self._format_options: dict = {}
        self._ctxname = transformation_ctx
        self._options = dict(options)
        self._catalog: Optional[tuple] = None

    def setFormat(self, format: str, **options) -> None:
        self._format = format
        self._format_options = dict(options)

    def setCatalogInfo(self, catalogDatabase: str, catalogTableName: str,
                       catalogId: Optional[str] = None) -> None:
        self._catalog = (catalogDatabase, catalogTableName, catalogId)

    def writeFrame(self, dynamic_frame, info: str = ""):
        opts = self._options
        conf = getattr(self, "_jdbc_conf", None)
        if conf is not None:
            return self._ctx.write_dynamic_frame_from_jdbc_conf(
                dynamic_frame, conf[0], opts, transformation_ctx=self._ctxname, catalog_id=conf[1])
        if (self._type or "").lower() in _JDBC_CONNECTIONS or (
                _catalog_connection.is_sink(self._type) and self._catalog is None):
            return self._ctx.write_dynamic_frame_from_options(
                dynamic_frame, self._type, opts, transformation_ctx=self._ctxname)
        path, fmt, fmt_opts = opts.get("path"), self._format, dict(self._format_options)
        pkeys = _partition_names(opts.get("partitionKeys"))
        if self._catalog is not None and not path:
            cat = _catalog()
            try:
                sink = cat.resolve_sink(self._catalog[0], self._catalog[1],
                                        catalog_id=self._catalog[2])
            except getattr(cat, "JdbcCatalogTable", ()):
                return self._ctx.write_dynamic_frame_from_catalog(
                    dynamic_frame, self._catalog[0], self._catalog[1],
                    transformation_ctx=self._ctxname, additional_options=opts,
                    catalog_id=self._catalog[2])
            path = sink.path
            fmt = fmt or sink.format
            fmt_opts = fmt_opts or dict(getattr(sink, "format_options", None) or {})
            pkeys = pkeys or _partition_names(getattr(sink, "partition_keys", None))
        if not path:
            raise ValueError("getSink needs path= (or setCatalogInfo for a catalog table)")
        uris = _write_files(self._ctx._engine, dynamic_frame, path, fmt or "json", fmt_opts, pkeys,
                            opts)
        self._ctx.written[self._ctxname or str(path)] = uris
        if self._catalog is not None:
            db, table, catalog_id = self._catalog
            enable = str(opts.get("enableUpdateCatalog", "false")).lower() == "true"
            columns, keys = _catalog_columns(dynamic_frame.schema(), pkeys)
            _catalog().update_after_write(db, table, uris, keys, columns,
                                          opts.get("updateBehavior", "UPDATE_IN_DATABASE"), enable,
                                          catalog_id, location=str(path), fmt=fmt or "json",
                                          format_options=fmt_opts)
        return dynamic_frame

    write = writeFrame
