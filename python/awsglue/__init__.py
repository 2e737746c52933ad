"""OpenGlue's implementation of the `awsglue` job library.

Job scripts written for AWS Glue import this package unchanged. Today it provides
`awsglue.utils.getResolvedOptions` and `awsglue.job.Job`; GlueContext and DynamicFrame arrive with
the embedded engine.
"""
