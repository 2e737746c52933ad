"""The engines a job's Glue API runs on: `embedded` (C++/Arrow, the default) and `spark`."""
