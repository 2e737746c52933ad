"""The DynamicFrameCollection transforms: SelectFromCollection, MapToCollection, FlatMap."""
from awsglue.dynamicframe import DynamicFrameCollection
from awsglue.transforms.transform import GlueTransform


class SelectFromCollection(GlueTransform):
    """One frame of a DynamicFrameCollection."""

    def __call__(self, dfc: DynamicFrameCollection, key, transformation_ctx=""):
        return dfc.select(key, transformation_ctx)


class MapToCollection(GlueTransform):
    """Applies `callable(frame, transformation_ctx)` to every frame of a collection; returns the
    collection of the results under the same keys (DynamicFrameCollection.map)."""

    def __call__(self, dfc: DynamicFrameCollection, callable, transformation_ctx=""):
        return dfc.map(callable, transformation_ctx)

    @classmethod
    def describeReturn(cls):
        return {"type": "DynamicFrameCollection"}


class FlatMap(GlueTransform):
    """Applies a transform (a GlueTransform class or any function taking `frame=`) with the
    given keyword arguments to every frame of a collection. The results stay a collection: a
    frame result keeps its key; a collection result (e.g. SplitFields) adds its frames as
    `<key>_<sub key>` (DynamicFrameCollection.flatMap)."""

    def __call__(self, dfc: DynamicFrameCollection, BatchTransform, transformation_ctx="",
                 **base_kwargs):
        run = getattr(BatchTransform, "apply", BatchTransform)

        def each(frame, ctx):
            return run(frame=frame, transformation_ctx=ctx, **base_kwargs)
        return dfc.flatMap(each, transformation_ctx)

    @classmethod
    def describeReturn(cls):
        return {"type": "DynamicFrameCollection"}
