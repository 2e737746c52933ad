"""OpenGlue's runtime machinery behind the `awsglue` façade (python/README.md draws the map).

- `engines.embedded`: the embedded C++/Arrow engine (lazy plans, the `_engine` extension) and
  the pyspark stand-in's objects (`engines.embedded.spark_api`);
- `engines.spark`: the Spark engine (native frames, the DataFrame bridge, the session's settings,
  the run's engine set-up);
- `engine_select`: which engine runs a script (`auto`);
- `types`: Glue's type classes and their Arrow mapping (re-exported by awsglue.gluetypes);
- `catalog`, `storage`, `jdbc`: the Data Catalog, object store and database clients;
- `sinks`: what the Glue API's file and catalog sinks share;
- `bookmarks`, `run_state`: bookmark state and selection, the running Job and its hooks;
- `bookmark_tool`, `crawl_jdbc`: the `openglue bookmarks` tool and the crawler's JDBC helper,
  run by the server as `python -m`.

Nothing here imports `awsglue` (python/tests/test_layout.py checks it).
"""
