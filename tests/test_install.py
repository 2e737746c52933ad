"""What a fresh install relies on: every third-party import is pinned, and the server's default
job interpreter is the project's virtual environment."""
import ast
import os
import re
import subprocess
import sys

import pytest

from conftest import BIN, ROOT

# Import name -> distribution name, where they differ.
DISTRIBUTION = {"yaml": "pyyaml", "dateutil": "python-dateutil"}


def pinned(path):
    names = set()
    for line in open(path):
        m = re.match(r"\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*==", line)
        if m:
            names.add(m.group(1).lower().replace("_", "-"))
    return names


def third_party_imports(folder, skip=()):
    """Top-level modules imported by the .py files under folder (but those under the folders
    `skip`), minus the standard library and the project's own modules."""
    own = {"awsglue", "awsgluedq", "openglue_runtime", "conftest", "jobkit", "wire", "benchlib", "job_access",
           # The pyspark stand-in (python/shims, installed as openglue_standin) imports itself.
           "pyspark", "openglue_standin"}
    # pip: every venv's installer, not a pin (openglue_runtime.python_modules falls back to its
    # vendored packaging where the runtime has no packaging of its own).
    own.add("pip")
    # Any module of the repository's own (a test may import a bench helper, say).
    for top in ("tests", "python", "examples", "tools", "bench"):
        for root, _, files in os.walk(os.path.join(ROOT, top)):
            own.update(f[:-3] for f in files if f.endswith(".py"))
    found = {}
    for root, _, files in os.walk(folder):
        if any(os.path.commonpath([root, x]) == x for x in skip):
            continue
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(root, name)
            tree = ast.parse(open(path, encoding="utf-8").read(), path)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    modules = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules = [node.module]
                else:
                    continue
                for module in modules:
                    top = module.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in own:
                        found.setdefault(top, path)
    return found


def test_every_third_party_import_is_pinned():
    requirements = (pinned(os.path.join(ROOT, "requirements.txt")) |
                    pinned(os.path.join(ROOT, "requirements-nodeps.txt")))
    # The Airflow DAG and its job run in Airflow's own venv (tests/airflow/requirements.txt).
    airflow_dir = os.path.join(ROOT, "tests", "airflow")
    for folder in ("tests", "python", "examples", "tools", "cmake"):
        for module, path in third_party_imports(os.path.join(ROOT, folder),
                                                skip=(airflow_dir,)).items():
            dist = DISTRIBUTION.get(module, module).lower().replace("_", "-")
            assert dist in requirements, f"{path} imports {module}: not pinned in requirements.txt"
    airflow = requirements | pinned(os.path.join(airflow_dir, "requirements.txt"))
    for module, path in third_party_imports(airflow_dir).items():
        dist = {"airflow": "apache-airflow"}.get(module, module).lower().replace("_", "-")
        assert dist in airflow, f"{path} imports {module}: not pinned in tests/airflow/requirements.txt"
    bench = requirements | pinned(os.path.join(ROOT, "bench", "requirements.txt"))
    # The data-quality benchmark's peers run in a venv of their own (make bench-dq-peers).
    peers_script = os.path.join(ROOT, "bench", "dq", "peers.py")
    peers = bench | pinned(os.path.join(ROOT, "bench", "dq", "requirements-peers.txt"))
    for module, path in third_party_imports(os.path.join(ROOT, "bench")).items():
        dist = {"soda": "soda-core"}.get(module, DISTRIBUTION.get(module, module))
        dist = dist.lower().replace("_", "-")
        if path == peers_script:
            assert dist in peers, f"{path} imports {module}: not pinned in bench/dq/requirements-peers.txt"
        else:
            assert dist in bench, f"{path} imports {module}: not pinned in bench/requirements.txt"


def test_default_job_interpreter_is_the_build_python():
    help_text = subprocess.run([BIN, "serve", "--help"], capture_output=True, text=True,
                               timeout=30).stdout
    m = re.search(r"--python PATH\s+interpreter for job scripts \[([^\]]+)\]", help_text)
    assert m, help_text
    default = m.group(1)
    assert os.path.isabs(default) and os.access(default, os.X_OK), default
    venv = os.environ.get("VIRTUAL_ENV")  # `make test` runs in the project's .venv
    if venv and os.path.realpath(venv) == os.path.realpath(os.path.join(ROOT, ".venv")):
        assert default == os.path.join(venv, "bin", "python3")
        # Nothing is installed into the system Python: the venv is a real one.
        out = subprocess.run([default, "-c", "import sys, boto3; print(sys.prefix != sys.base_prefix)"],
                             capture_output=True, text=True, timeout=60).stdout.strip()
        assert out == "True"


def test_job_access_grants_the_job_group_search_only_where_others_cannot_search():
    """`make build` opens a checkout under /root to job runs (tools/job_access.py): only the
    folders others cannot search get an ACL entry, and it is search (x) for the job group."""
    import os
    import tempfile

    import job_access
    if os.geteuid() != 0:
        pytest.skip("job runs get uids of their own only when the server runs as root")
    top = tempfile.mkdtemp(prefix="og-job-access-")  # 0700, like /root
    try:
        open_dir = os.path.join(top, "open")
        os.mkdir(open_dir, 0o755)
        os.chmod(open_dir, 0o755)
        target = os.path.join(open_dir, "python3")
        with open(target, "w") as f:
            f.write("")
        changed = job_access.grant_search([target], group=1234567)
        assert top in changed and open_dir not in changed
        acl = os.getxattr(top, "system.posix_acl_access")
        assert acl == job_access.acl_xattr(0o700, 1, 1234567)
        assert os.stat(top).st_mode & 0o777 == 0o710  # the mask shows as group bits: x only
    finally:
        import shutil
        shutil.rmtree(top)
