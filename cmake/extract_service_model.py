"""Writes a service model shipped in the installed (pinned) botocore to a file.

Usage: extract_service_model.py SERVICE API_VERSION OUTPUT
  (glue 2017-03-31: the Glue API; logs 2014-03-28: CloudWatch Logs)
"""
import gzip
import json
import os
import sys

import botocore

service, version, output = sys.argv[1:4]
base = os.path.join(os.path.dirname(botocore.__file__), "data", service, version)
path = os.path.join(base, "service-2.json.gz")
if os.path.exists(path):
    model = json.load(gzip.open(path))
else:
    model = json.load(open(os.path.join(base, "service-2.json")))
# Documentation strings are half the size and the server never shows them.
for shape in model["shapes"].values():
    shape.pop("documentation", None)
    for member in shape.get("members", {}).values():
        member.pop("documentation", None)
for op in model["operations"].values():
    op.pop("documentation", None)
model.pop("documentation", None)
os.makedirs(os.path.dirname(output), exist_ok=True)
with open(output, "w") as out:
    json.dump(model, out, separators=(",", ":"), sort_keys=True)
