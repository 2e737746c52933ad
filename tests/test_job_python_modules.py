"""--additional-python-modules through real job runs (docs/jobs.md, "Additional Python modules"):
a wheel built here from a setup.py and put on the server's S3 (offline), the cached
environment's reuse, a changed set, a bad requirement, a tampered cache, concurrent runs of one
set, isolation from the run's own user, a run stopped mid-install, the cleaning of unused
environments, zips of wheels and requirements files, and a tiny pinned package from PyPI
(skipped offline). The other job arguments: tests/test_job_arguments.py."""
import json
import os
import subprocess
import sys
import textwrap
import time
import urllib.request

import pytest

from jobkit import ERROR, OUTPUT, JobKit, kit, log_messages, unique, wait_for, wait_run  # noqa: F401

PREFIX = "[openglue] --additional-python-modules: "


def build_wheel(tmp_path, name, version, body):
    """Builds <name>-<version>-py3-none-any.whl from a setup.py with the venv's setuptools
    (offline: --no-index, --no-build-isolation); returns its path."""
    source = tmp_path / f"src-{name}-{version}"
    (source / name).mkdir(parents=True)
    (source / "setup.py").write_text(
        f"from setuptools import setup\nsetup(name={name.replace('_', '-')!r}, version={version!r}, "
        f"packages=[{name!r}])\n")
    (source / name / "__init__.py").write_text(textwrap.dedent(body))
    dist = tmp_path / f"dist-{name}-{version}"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--no-index", "-q", "-w", str(dist), str(source)], check=True,
                   capture_output=True, timeout=120)
    (wheel,) = list(dist.iterdir())
    return wheel


def make_wheel(tmp_path, name, version, body):
    """The same wheel written directly (a zip with the package, METADATA, WHEEL and RECORD, as
    the wheel format says): no build, for the tests that need many."""
    import base64
    import hashlib
    import zipfile
    info = f"{name}-{version}.dist-info"
    files = {f"{name}/__init__.py": textwrap.dedent(body).encode(),
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n".encode(),
             f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: openglue-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = [f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip('=')},{len(data)}"
              for path, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = tmp_path / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel


def put_object(server, bucket, key, path):
    """Puts the file at `path` into the server's embedded store; returns its s3:// location."""
    target = os.path.join(server.data_dir, "s3", bucket, key)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(path, "rb") as src, open(target, "wb") as dst:
        dst.write(src.read())
    return f"s3://{bucket}/{key}"


def cache_dir(server):
    return os.path.join(server.data_dir, "python-modules")


def environments(server):
    try:
        return sorted(n for n in os.listdir(cache_dir(server)) if len(n) == 64)
    except FileNotFoundError:
        return []


def errors_of(server, run):
    return log_messages(server.client("logs"), ERROR, run["Id"])


def output_of(server, run):
    return log_messages(server.client("logs"), OUTPUT, run["Id"])


IMPORT_SCRIPT = """
    import og_mod_{tag}
    print("value", og_mod_{tag}.VALUE, og_mod_{tag}.__file__)
"""


def _wheels(tmp_path, server, make):
    """A package of the test's own (a fresh key): versions 1.0 and 2.0 on the server's S3."""
    tag = unique("w").split("_")[1]
    name = f"og_mod_{tag}"
    one = make(tmp_path, name, "1.0", 'VALUE = "one"\n')
    two = make(tmp_path, name, "2.0", 'VALUE = "two"\n')
    return {"tag": tag, "name": name,
            "1.0": put_object(server, "mods", f"{tag}/{one.name}", one),
            "2.0": put_object(server, "mods", f"{tag}/{two.name}", two)}


@pytest.fixture()
def wheels(tmp_path, server):
    return _wheels(tmp_path, server, make_wheel)


@pytest.fixture()
def built_wheels(tmp_path, server):
    """The same, built from a setup.py by pip and setuptools (offline)."""
    return _wheels(tmp_path, server, build_wheel)


def test_a_wheel_from_s3_is_installed_once_and_reused(kit, server, built_wheels):
    wheels = built_wheels
    job = kit.job(IMPORT_SCRIPT.format(tag=wheels["tag"]), command="pythonshell",
                  DefaultArguments={"--additional-python-modules": wheels["1.0"]})
    before = set(environments(server))
    first = kit.run(job, timeout=120)
    assert first["JobRunState"] == "SUCCEEDED", (first.get("ErrorMessage"), errors_of(server, first))
    errors = errors_of(server, first)
    assert any(m.startswith(PREFIX + "installing " + wheels["1.0"]) for m in errors), errors
    assert any("environment" in m and "installed:" in m for m in errors), errors
    new = set(environments(server)) - before
    assert len(new) == 1, new
    (key,) = new
    site = os.path.join(cache_dir(server), key, "site")
    out = output_of(server, first)
    assert out == [f"value one {site}/{wheels['name']}/__init__.py"], out

    second = kit.run(job, timeout=60)
    assert second["JobRunState"] == "SUCCEEDED", second.get("ErrorMessage")
    errors = errors_of(server, second)
    assert any(m.startswith(PREFIX + "reusing environment " + key[:12]) and "verified by SHA-256" in m
               for m in errors), errors
    assert not any("installing" in m or m.startswith("  ") for m in errors), errors  # no pip
    assert output_of(server, second) == out
    assert set(environments(server)) - before == {key}
    manifest = json.load(open(os.path.join(cache_dir(server), key, "manifest.json")))
    assert manifest["key"] == key and manifest["run"] == first["Id"]
    assert [e[0] for e in manifest["entries"]] == sorted(e[0] for e in manifest["entries"])
    assert any(e[0] == f"{wheels['name']}/__init__.py" and e[1] == "f" for e in manifest["entries"])


def test_a_changed_set_gets_a_new_environment(kit, server, wheels):
    job = kit.job(IMPORT_SCRIPT.format(tag=wheels["tag"]),
                  DefaultArguments={"--additional-python-modules": wheels["1.0"]})
    before = set(environments(server))
    one = kit.run(job, timeout=120)
    assert one["JobRunState"] == "SUCCEEDED", one.get("ErrorMessage")
    first_envs = set(environments(server)) - before
    # The run's Arguments override the job's: version 2.0 is another set.
    two = kit.run(job, timeout=120, Arguments={"--additional-python-modules": wheels["2.0"]})
    assert two["JobRunState"] == "SUCCEEDED", two.get("ErrorMessage")
    assert output_of(server, two)[0].startswith("value two ")
    envs = set(environments(server)) - before
    assert len(envs) == 2 and first_envs < envs
    assert any(m.startswith(PREFIX + "installing ") for m in errors_of(server, two))
    # Options are part of the set: the same wheel with an installer option is a third one.
    three = kit.run(job, timeout=120, Arguments={"--python-modules-installer-option": "--no-index"})
    assert three["JobRunState"] == "SUCCEEDED", three.get("ErrorMessage")
    assert len(set(environments(server)) - before) == 3


def test_a_bad_requirement_fails_the_run_and_caches_nothing(kit, server):
    missing = unique("og-no-such-package").replace("_", "-")
    job = kit.job("print('never')", DefaultArguments={
        "--additional-python-modules": f"{missing}==1.0",
        "--python-modules-installer-option": "--no-index"})
    before = sorted(os.listdir(cache_dir(server))) if os.path.isdir(cache_dir(server)) else []
    run = kit.run(job, timeout=120)
    assert run["JobRunState"] == "FAILED"
    assert run["ErrorMessage"].startswith("--additional-python-modules could not be installed: "), run
    assert f"No matching distribution found for {missing}==1.0" in run["ErrorMessage"], run
    assert "nothing was cached" in run["ErrorMessage"]
    assert output_of(server, run) == []  # the script never ran
    after = sorted(os.listdir(cache_dir(server)))
    added = set(after) - set(before)
    # Only the key's lock file is left: no environment, no staging folder.
    assert all(n.endswith(".install.lock") for n in added), added


def test_an_unreadable_entry_and_a_refused_option_fail_the_run(kit, server, wheels):
    job = kit.job("print('never')", DefaultArguments={"--additional-python-modules": "s3://mods/none.whl"})
    run = kit.run(job, timeout=60)
    assert run["JobRunState"] == "FAILED"
    assert run["ErrorMessage"].startswith("--additional-python-modules: cannot use s3://mods/none.whl"), run
    job = kit.job("print('never')", DefaultArguments={
        "--additional-python-modules": wheels["1.0"], "--python-modules-installer-option": "--target /tmp/x"})
    run = kit.run(job, timeout=60)
    assert run["JobRunState"] == "FAILED"
    assert run["ErrorMessage"] == ("--additional-python-modules could not be installed: "
                                   "--python-modules-installer-option --target is not supported: "
                                   "the environment is OpenGlue's own folder"), run


def test_a_tampered_environment_is_detected_and_installed_again(kit, server, wheels):
    job = kit.job(IMPORT_SCRIPT.format(tag=wheels["tag"]),
                  DefaultArguments={"--additional-python-modules": wheels["1.0"]})
    before = set(environments(server))
    assert kit.run(job, timeout=120)["JobRunState"] == "SUCCEEDED"
    (key,) = set(environments(server)) - before
    module = os.path.join(cache_dir(server), key, "site", wheels["name"], "__init__.py")
    os.chmod(module, 0o644)
    with open(module, "w") as f:
        f.write('VALUE = "tampered"\n')
    run = kit.run(job, timeout=120)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    errors = errors_of(server, run)
    assert any(m == (PREFIX + f"environment {key[:12]} failed verification (site/{wheels['name']}/"
                     "__init__.py: content differs (SHA-256)); removing it and installing it again")
               for m in errors), errors
    assert output_of(server, run)[0].startswith("value one ")
    assert open(module).read() == 'VALUE = "one"\n'


def test_concurrent_runs_of_one_set_install_it_once(kit, server, wheels):
    job = kit.job(IMPORT_SCRIPT.format(tag=wheels["tag"]), ExecutionProperty={"MaxConcurrentRuns": 3},
                  DefaultArguments={"--additional-python-modules": wheels["2.0"]})
    before = set(environments(server))
    ids = [kit.start(job) for _ in range(3)]
    runs = [wait_run(kit.glue, job, run_id, timeout=180) for run_id in ids]
    assert [r["JobRunState"] for r in runs] == ["SUCCEEDED"] * 3, [r.get("ErrorMessage") for r in runs]
    assert len(set(environments(server)) - before) == 1
    logs = [errors_of(server, r) for r in runs]
    installs = [any(m.startswith(PREFIX + "installing ") for m in errors) for errors in logs]
    reuses = [any(m.startswith(PREFIX + "reusing environment ") for m in errors) for errors in logs]
    assert sorted(installs) == [False, False, True] and sorted(reuses) == [False, True, True], logs
    assert all(output_of(server, r)[0].startswith("value two ") for r in runs)


@pytest.mark.skipif(os.geteuid() != 0, reason="runs have uids of their own only when the server is root")
def test_a_run_cannot_write_its_environment_nor_the_runtime(kit, server, wheels):
    job = kit.job(f"""
        import os, sys, sysconfig
        import og_mod_{wheels['tag']} as m
        site = os.environ["OPENGLUE_PYTHON_MODULES"]
        for target in (os.path.join(site, "og_mod_{wheels['tag']}", "__init__.py"),
                       os.path.join(site, "planted.py"),
                       os.path.join(os.path.dirname(os.path.dirname(site)), "planted"),
                       os.path.join(sysconfig.get_paths()["purelib"], "planted.py")):
            try:
                open(target, "a").close()
                print("wrote", target)
            except OSError as e:
                print("refused", type(e).__name__)
    """, DefaultArguments={"--additional-python-modules": wheels["1.0"]})
    run = kit.run(job, timeout=120)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert output_of(server, run) == ["refused PermissionError"] * 4


def test_a_requirements_file_and_a_zip_of_wheels(kit, server, wheels, tmp_path):
    import zipfile
    archive = tmp_path / "wheels.zip"
    wheel_path = os.path.join(server.data_dir, "s3", wheels["2.0"][len("s3://"):])
    with zipfile.ZipFile(archive, "w") as z:
        z.write(wheel_path, "wheels/" + os.path.basename(wheel_path))
    zipped = put_object(server, "mods", f"{wheels['tag']}/wheels.zip", archive)
    job = kit.job(IMPORT_SCRIPT.format(tag=wheels["tag"]),
                  DefaultArguments={"--additional-python-modules": zipped})
    run = kit.run(job, timeout=120)
    assert run["JobRunState"] == "SUCCEEDED", (run.get("ErrorMessage"), errors_of(server, run))
    assert output_of(server, run)[0].startswith("value two ")
    # AWS Glue 5.0's requirements.txt: `-r` as the option, the file as the module.
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(wheel_path.replace("2.0", "1.0") + "\n")
    listed = put_object(server, "mods", f"{wheels['tag']}/requirements.txt", requirements)
    run = kit.run(job, timeout=120, Arguments={"--additional-python-modules": listed,
                                               "--python-modules-installer-option": "-r"})
    assert run["JobRunState"] == "SUCCEEDED", (run.get("ErrorMessage"), errors_of(server, run))
    assert output_of(server, run)[0].startswith("value one ")


def _pypi_reachable():
    try:
        urllib.request.urlopen("https://pypi.org/simple/termcolor/", timeout=5).close()
        return True
    except OSError:
        return False


def test_a_pinned_package_from_pypi(kit, server):
    if not _pypi_reachable():
        pytest.skip("PyPI is not reachable from here (the offline tests above still run)")
    # termcolor 2.4.0: one pure-Python wheel of a few KB, no dependencies, not in the runtime.
    job = kit.job("""
        import importlib.metadata, os, termcolor
        layer = os.environ["OPENGLUE_PYTHON_MODULES"]
        print("termcolor", importlib.metadata.version("termcolor"), termcolor.__file__.startswith(layer))
    """, DefaultArguments={"--additional-python-modules": "termcolor==2.4.0"})
    run = kit.run(job, timeout=180)
    assert run["JobRunState"] == "SUCCEEDED", (run.get("ErrorMessage"), errors_of(server, run))
    assert output_of(server, run) == ["termcolor 2.4.0 True"]
    errors = errors_of(server, run)
    assert any(m == PREFIX + "installing termcolor 2.4.0" for m in errors), errors


def test_environments_no_run_used_for_the_retention_period_are_removed(fresh_server, tmp_path):
    glue = fresh_server.client()
    jobs = JobKit(fresh_server, glue)
    try:
        tag = unique("c").split("_")[1]
        wheel = make_wheel(tmp_path, f"og_mod_{tag}", "1.0", 'VALUE = "one"\n')
        location = put_object(fresh_server, "mods", f"{tag}/{wheel.name}", wheel)
        job = jobs.job(IMPORT_SCRIPT.format(tag=tag), DefaultArguments={"--additional-python-modules": location})
        assert jobs.run(job, timeout=120)["JobRunState"] == "SUCCEEDED"
        old, recent = environments(fresh_server), None
        other = jobs.run(job, timeout=120, Arguments={"--python-modules-installer-option": "--no-index"})
        assert other["JobRunState"] == "SUCCEEDED"
        (recent,) = set(environments(fresh_server)) - set(old)
        (idle,) = old
        forty_days_ago = time.time() - 40 * 86400
        os.utime(os.path.join(cache_dir(fresh_server), idle + ".use.lock"), (forty_days_ago, forty_days_ago))
    finally:
        jobs.close()
    fresh_server.stop()
    fresh_server.start()  # the first tick cleans (python_modules_retention_days = 30)
    wait_for(lambda: environments(fresh_server) == [recent], 20, "the idle environment to go")

    def logged():
        with open(fresh_server.log_path, errors="replace") as f:
            return "removed 1 --additional-python-modules environment(s) unused for 30 days" in f.read()
    wait_for(logged, 10, "the server to log the removal")


def test_a_run_stopped_while_pip_installs_leaves_nothing_to_use(kit, server):
    import socket
    import threading
    # An index that accepts connections and never answers: pip waits until the run is stopped.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    held = []

    def hold():
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return
    threading.Thread(target=hold, daemon=True).start()
    spec = unique("og-hang").replace("_", "-") + "==1.0"
    job = kit.job("print('never')", DefaultArguments={
        "--additional-python-modules": spec,
        "--python-modules-installer-option": f"--index-url http://127.0.0.1:{port}/simple --retries 0 --timeout 30"})
    before = set(environments(server))
    run_id = kit.start(job)
    wait_for(lambda: any(m.startswith(PREFIX + "installing ") for m in errors_of(server, {"Id": run_id})),
             60, "pip to start")
    wait_for(lambda: held, 30, "pip to reach the index")
    kit.glue.batch_stop_job_run(JobName=job, JobRunIds=[run_id])
    run = wait_run(kit.glue, job, run_id, timeout=60)
    assert run["JobRunState"] == "STOPPED"
    assert set(environments(server)) == before
    leftovers = [n for n in os.listdir(cache_dir(server)) if n.startswith(".staging-")]
    assert leftovers  # killed midway: its staging folder is left for the next installer
    key = leftovers[0][len(".staging-"):][:64]
    # The next installer of the same set removes it, whatever happens to its own install.
    listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() and stops listening: refused
    listener.close()
    for conn in held:
        conn.close()
    again = kit.run(job, timeout=120)
    assert again["JobRunState"] == "FAILED", again
    assert again["ErrorMessage"].startswith("--additional-python-modules could not be installed: ")
    assert not [n for n in os.listdir(cache_dir(server)) if key in n and not n.endswith(".lock")]
