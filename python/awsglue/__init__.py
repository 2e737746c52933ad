"""OpenGlue's implementation of the `awsglue` job library.

Job scripts written for AWS Glue import this package unchanged: `awsglue.context.GlueContext`,
`awsglue.dynamicframe.DynamicFrame`, `awsglue.transforms`, `awsglue.gluetypes`,
`awsglue.utils.getResolvedOptions` and `awsglue.job.Job`. Data work runs on an engine object
(`awsglue._embedded.EmbeddedEngine`, the C++/Arrow engine; Spark later) behind the frames.
"""
