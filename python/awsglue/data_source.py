"""`glueContext.getSource(...)`: a source set up step by step, read with getFrame()."""


class DataSource:
    """`glueContext.getSource(...)`: setFormat then getFrame."""

    def __init__(self, ctx, connection_type: str, fmt, transformation_ctx: str,
                 push_down_predicate: str, options: dict):
        self._ctx = ctx
        self._type = connection_type
        self._format = fmt
        self._format_options: dict = {}
        self._ctxname = transformation_ctx
        self._pdp = push_down_predicate
        self._options = options

    def setFormat(self, format: str, **options) -> None:
        self._format = format
        self._format_options = dict(options)

    def getFrame(self, **options):
        opts = dict(self._options)
        opts.update(options)
        if self._type.lower() == "catalog" or ("database" in opts and "table_name" in opts
                                                and "paths" not in opts):
            return self._ctx.create_dynamic_frame_from_catalog(
                opts.pop("database", None), opts.pop("table_name", opts.pop("tableName", None)),
                transformation_ctx=self._ctxname, push_down_predicate=self._pdp,
                additional_options=opts)
        return self._ctx.create_dynamic_frame_from_options(
            self._type, opts, self._format, self._format_options, self._ctxname)
