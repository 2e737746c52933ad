"""A fresh virtual environment with `pip install ./python` in it, offline, for the tests of the
installed package (tests/test_etl_install.py, tests/test_unit_testing_pattern.py).

The new environment is made by the interpreter running the tests (the project environment's,
itself Debian's python3) with `--without-pip` (ensurepip is slow); it reaches the project
environment's packages (pyarrow, pandas, boto3, pytest, pyspark, ...) through a .pth file, so
nothing is downloaded. The package is installed by the project environment's pip with --no-deps,
--no-index and --no-build-isolation, from a copy of python/ (the build writes into the tree it
builds)."""
import os
import shutil
import subprocess
import sys
import sysconfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fresh_venv(base, hide=()):
    """Makes base/venv with the runtime installed; returns (python, purelib). `hide`: name
    prefixes of the project environment's packages the new one must not see (("pyspark",
    "py4j"): an installation without a real pyspark)."""
    source = base / "src"
    shutil.copytree(os.path.join(ROOT, "python"), source,
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info", "tests"))
    env_dir = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True,
                   timeout=120)
    python = str(env_dir / "bin" / "python")
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    project_site = sysconfig.get_path("purelib")
    visible = base / "project-site"
    visible.mkdir()
    for name in os.listdir(project_site):
        if not name.startswith(tuple(hide)):
            os.symlink(os.path.join(project_site, name), visible / name)
    with open(os.path.join(purelib, "zz_project_venv.pth"), "w") as f:
        f.write(str(visible) + "\n")
    result = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install",
                             "--no-deps", "--no-index",
                             "--no-build-isolation", "--disable-pip-version-check", "-q",
                             str(source)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return python, purelib


def bare_env(**extra):
    """This process's environment without what would point a run elsewhere (PYTHONPATH,
    PYSPARK_PYTHON, OpenGlue's and AWS's settings), plus `extra`: as a user's shell where the
    new environment is not activated."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYSPARK_PYTHON") and not k.startswith(("OPENGLUE_", "AWS_"))}
    env.update(extra)
    return env
