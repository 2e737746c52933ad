"""Writes the Glue service model shipped in the installed (pinned) botocore to argv[1]."""
import gzip
import json
import os
import sys

import botocore

base = os.path.join(os.path.dirname(botocore.__file__), "data", "glue", "2017-03-31")
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
os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
with open(sys.argv[1], "w") as out:
    json.dump(model, out, separators=(",", ":"), sort_keys=True)
