"""The Spark engine: DynamicFrames as Spark plans of the embedded engine's operators (`frames`),
the DataFrame bridge (`bridge`), the session's settings (`conf`) and the run's engine set-up
(`engine`, called by the pyspark stand-in's first import)."""
