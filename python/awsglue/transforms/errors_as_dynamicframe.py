"""ErrorsAsDynamicFrame: the error records of a frame, as a frame."""
from awsglue.dynamicframe import DynamicFrame
from awsglue.transforms.transform import GlueTransform


class ErrorsAsDynamicFrame(GlueTransform):
    """The error records of a frame, as a frame."""

    def __call__(self, frame: DynamicFrame):
        return frame.errorsAsDynamicFrame()
