"""Where `s3://` paths go, from the environment (see CONTRACT.md, "storage").

`storage_options()` returns the dict of strings the engine's calls take as `storage`:
- `OPENGLUE_S3_ROOT` set (a job run on a server with the embedded store, or a user's own
  folder in a unit test): `{"s3_root": <that folder>}`: `s3://b/k` is `<root>/b/k`.
- else an S3 endpoint from `AWS_ENDPOINT_URL_S3` (or `AWS_ENDPOINT_URL`) with the credentials
  of the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`) and the
  region (`AWS_REGION`, `AWS_DEFAULT_REGION`, default us-east-1).
- else `{}`: only local paths and `file://` work; an `s3://` path is refused by the engine.
"""
import os
from typing import Dict, Mapping, Optional


def storage_options(environ: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The engine's `storage` dict for the environment `environ` (default: os.environ)."""
    env = os.environ if environ is None else environ
    root = env.get("OPENGLUE_S3_ROOT", "")
    if root:
        return {"s3_root": root}
    endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or ""
    if not endpoint:
        return {}
    options = {
        "endpoint": endpoint,
        "access_key": env.get("AWS_ACCESS_KEY_ID", ""),
        "secret_key": env.get("AWS_SECRET_ACCESS_KEY", ""),
        "region": env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
    }
    token = env.get("AWS_SESSION_TOKEN", "")
    if token:
        options["session_token"] = token
    return options
