"""Real PostgreSQL and MariaDB servers for the JDBC tests (Debian's `postgresql` and
`mariadb-server`, see APT_PACKAGES in the Makefile).

Session-scoped fixtures `pg` and `maria` start one server each in a temporary folder, on a free
port of 127.0.0.1, as an unprivileged user (Debian's `postgres` / `mysql` system users when the
tests run as root: PostgreSQL refuses to run as root), create a database `gluedb` and a user
`glue` with a password, and stop the server at the end of the session. Nothing depends on system
services being up. A missing binary is a test failure naming the Debian package, never a skip:
CI must have them.

    from dbkit import pg, maria  # noqa: F401   (import the fixtures into a test module)

    def test_x(pg):
        pg.url          # jdbc:postgresql://127.0.0.1:PORT/gluedb
        pg.user, pg.password
        with pg.connect() as conn: ...   # a DB-API connection as `glue` (autocommit)
"""
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

START_TIMEOUT = 60  # seconds for one server to accept connections
DATABASE = "gluedb"
USER = "glue"
PASSWORD = "s3cret-Pw_1"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_user(user):
    """The command prefix that runs a program as `user` when this process is root."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam(user)
    except KeyError:
        pytest.fail(f"the system user {user!r} is missing (Debian's package creates it)")
    return ["runuser", "-u", user, "--"]


def _chown_tree(path, user):
    if os.geteuid() != 0:
        return
    entry = pwd.getpwnam(user)
    os.chown(path, entry.pw_uid, entry.pw_gid)


def _need(path_or_glob, package):
    found = sorted(glob.glob(path_or_glob))
    if not found:
        pytest.fail(f"{path_or_glob} not found: install the Debian package {package} "
                    "(`make deps` installs APT_PACKAGES)")
    return found[-1]


def _wait(check, proc, what, log_path):
    deadline = time.time() + START_TIMEOUT
    last = None
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            break
        try:
            check()
            return
        except Exception as e:  # noqa: BLE001 - any connection error means "not yet"
            last = e
        time.sleep(0.1)
    log = ""
    try:
        with open(log_path, errors="replace") as f:
            log = f.read()[-3000:]
    except OSError:
        pass
    pytest.fail(f"{what} did not start within {START_TIMEOUT} s ({last}); log:\n{log}")


class Database:
    """A running database server and the credentials of its test user."""

    kind = ""

    def __init__(self, root, port):
        self.root = root
        self.port = port
        self.host = "127.0.0.1"
        self.database = DATABASE
        self.user = USER
        self.password = PASSWORD
        self.proc = None

    @property
    def url(self):
        return f"jdbc:{self.kind}://{self.host}:{self.port}/{self.database}"

    def options(self, **extra):
        """Glue connection_options for a table: url, user, password (+ extra)."""
        return {"url": self.url, "user": self.user, "password": self.password, **extra}

    def execute(self, sql, params=None):
        """Runs one statement; returns the fetched rows (list of tuples) when it has any."""
        with self.connect() as conn:
            cur = conn.cursor()
            cur.execute(sql, params)
            rows = cur.fetchall() if cur.description else []
            cur.close()
            return [tuple(r) for r in rows]


class Postgres(Database):
    kind = "postgresql"

    def start(self):
        bindir = os.path.dirname(_need("/usr/lib/postgresql/*/bin/initdb", "postgresql"))
        user = "postgres"
        prefix = _as_user(user)
        _chown_tree(self.root, user)
        data = os.path.join(self.root, "data")
        pwfile = os.path.join(self.root, "pw")
        with open(pwfile, "w") as f:
            f.write("superpw\n")
        _chown_tree(pwfile, user)
        self.log_path = os.path.join(self.root, "postgres.log")
        subprocess.run(prefix + [os.path.join(bindir, "initdb"), "-D", data, "-U", "postgres",
                                 "--pwfile", pwfile, "-A", "scram-sha-256", "-E", "UTF8",
                                 "--no-sync", "--locale", "C"],
                       check=True, capture_output=True, timeout=120)
        log = open(self.log_path, "ab")
        _chown_tree(self.log_path, user)
        self.proc = subprocess.Popen(
            prefix + [os.path.join(bindir, "postgres"), "-D", data, "-p", str(self.port),
                      "-h", "127.0.0.1", "-k", self.root, "-c", "fsync=off",
                      "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                      "-c", "max_connections=60", "-c", "shared_buffers=16MB"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        import psycopg

        def ready():
            psycopg.connect(host=self.host, port=self.port, user="postgres", password="superpw",
                            dbname="postgres", connect_timeout=2).close()
        _wait(ready, self.proc, "PostgreSQL", self.log_path)
        with psycopg.connect(host=self.host, port=self.port, user="postgres", password="superpw",
                             dbname="postgres", autocommit=True) as conn:
            conn.execute(f"CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'")
            conn.execute(f"CREATE DATABASE {DATABASE} OWNER {USER}")
        return self

    def connect(self):
        import psycopg
        return psycopg.connect(host=self.host, port=self.port, user=self.user,
                               password=self.password, dbname=self.database, autocommit=True)

    def stop(self):
        _stop(self.proc)


class MariaDB(Database):
    kind = "mysql"

    def start(self):
        mariadbd = shutil.which("mariadbd") or _need("/usr/sbin/mariadbd", "mariadb-server")
        install = shutil.which("mariadb-install-db") or _need("/usr/bin/mariadb-install-db",
                                                              "mariadb-server")
        user = "mysql"
        as_root = os.geteuid() == 0
        if as_root:
            try:
                pwd.getpwnam(user)
            except KeyError:
                pytest.fail("the system user 'mysql' is missing (Debian's mariadb-server creates it)")
        _chown_tree(self.root, user)
        data = os.path.join(self.root, "data")
        self.socket = os.path.join(self.root, "mysqld.sock")
        self.log_path = os.path.join(self.root, "mariadb.log")
        user_args = ["--user=" + user] if as_root else []
        subprocess.run([install, "--no-defaults", "--datadir=" + data, "--skip-test-db",
                        "--auth-root-authentication-method=normal", *user_args],
                       check=True, capture_output=True, timeout=120)
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [mariadbd, "--no-defaults", "--datadir=" + data, "--socket=" + self.socket,
             "--port=" + str(self.port), "--bind-address=127.0.0.1", "--skip-name-resolve",
             "--pid-file=" + os.path.join(self.root, "mariadb.pid"), "--innodb-flush-log-at-trx-commit=0",
             "--innodb-buffer-pool-size=16M", "--skip-log-bin", "--max-connections=60",
             "--innodb-flush-method=nosync", "--innodb-doublewrite=0", "--sync-binlog=0",
             "--log-error=" + self.log_path, *user_args],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        import pymysql

        def ready():
            pymysql.connect(unix_socket=self.socket, user="root", connect_timeout=2).close()
        _wait(ready, self.proc, "MariaDB", self.log_path)
        conn = pymysql.connect(unix_socket=self.socket, user="root", autocommit=True)
        try:
            with conn.cursor() as cur:
                cur.execute(f"CREATE DATABASE {DATABASE}")
                cur.execute(f"CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}'")
                cur.execute(f"GRANT ALL ON {DATABASE}.* TO '{USER}'@'%'")
        finally:
            conn.close()
        return self

    def connect(self):
        import pymysql
        return pymysql.connect(host=self.host, port=self.port, user=self.user,
                               password=self.password, database=self.database, autocommit=True)

    def stop(self):
        _stop(self.proc)


def _stop(proc):
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()  # PostgreSQL: smart shutdown; MariaDB: normal shutdown
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def _root(prefix):
    root = tempfile.mkdtemp(prefix=prefix)
    os.chmod(root, 0o755)
    return root


@pytest.fixture(scope="session")
def pg():
    server = Postgres(_root("og-pg-"), free_port())
    try:
        yield server.start()
    finally:
        server.stop()
        shutil.rmtree(server.root, ignore_errors=True)


@pytest.fixture(scope="session")
def maria():
    server = MariaDB(_root("og-maria-"), free_port())
    try:
        yield server.start()
    finally:
        server.stop()
        shutil.rmtree(server.root, ignore_errors=True)


@pytest.fixture(params=["postgresql", "mysql"])
def anydb(request):
    """Each test using it runs once on PostgreSQL and once on MariaDB."""
    return request.getfixturevalue("pg" if request.param == "postgresql" else "maria")
