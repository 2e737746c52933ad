"""The base class of every transform: `Cls.apply(...)` builds the transform and calls it."""


class GlueTransform:
    """Base class: `Cls.apply(*args, **kwargs)` == `Cls()(*args, **kwargs)`."""

    @classmethod
    def apply(cls, *args, **kwargs):
        return cls()(*args, **kwargs)

    @classmethod
    def name(cls) -> str:
        return cls.__name__

    @classmethod
    def describeArgs(cls):
        return []

    @classmethod
    def describeReturn(cls):
        return {"type": "DynamicFrame"}

    @classmethod
    def describeTransform(cls):
        return (cls.__doc__ or "").strip()

    @classmethod
    def describeErrors(cls):
        return []

    @classmethod
    def describe(cls):
        return {"transform": {"name": cls.name(), "description": cls.describeTransform()},
                "args": cls.describeArgs(), "returns": cls.describeReturn(),
                "raises": cls.describeErrors()}
