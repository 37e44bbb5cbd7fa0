"""A real PostgreSQL server for the tests, on a free loopback port, started and stopped by the test.

initdb and postgres refuse to run as root (CI runs as root): they then run as the ``postgres`` system
user that Debian's package creates, with the data directory in a fresh temporary directory it owns.
Never the server the machine may already run on 5432.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.redis_support import free_port


def _binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


class PostgresServer:
    def __init__(self) -> None:
        bindir = _binaries()
        if bindir is None:
            if os.environ.get("CI"):
                pytest.fail("PostgreSQL is not installed; .ci/run installs it (Debian package postgresql)")
            pytest.skip("PostgreSQL not installed")
        self.bindir = bindir
        self.port = free_port()
        self.workdir = Path(tempfile.mkdtemp(prefix="gateway-pg-"))
        self.data = self.workdir / "data"
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            try:
                user = pwd.getpwnam("postgres")
            except KeyError:
                pytest.fail("running as root needs the 'postgres' system user to start PostgreSQL")
            os.chown(self.workdir, user.pw_uid, user.pw_gid)
            # setpriv execs (no fork): the Popen is postgres itself, and its signals reach it.
            self.prefix = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups"]
        self.url = f"postgresql://gateway@127.0.0.1:{self.port}/postgres"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> PostgresServer:
        subprocess.run(
            [*self.prefix, str(self.bindir / "initdb"), "-D", str(self.data), "-U", "gateway", "-A", "trust"],
            check=True,
            capture_output=True,
            timeout=120,
        )
        self.proc = subprocess.Popen(
            [
                *self.prefix,
                str(self.bindir / "postgres"),
                "-D",
                str(self.data),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-k",
                str(self.workdir),  # its unix socket here, not in /var/run/postgresql
                "-c",
                "fsync=off",
                "-c",
                "full_page_writes=off",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import psycopg

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("postgres exited at start-up")
            try:
                with psycopg.connect(self.url, connect_timeout=1):
                    return self
            except psycopg.OperationalError:
                time.sleep(0.1)
        raise RuntimeError("postgres did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            # SIGINT: PostgreSQL's fast shutdown (SIGTERM would wait for clients to leave).
            self.proc.send_signal(2)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


def grafana_reader_database(postgres: PostgresServer) -> str:
    """A database ``gateway`` on ``postgres`` with deploy/postgres/initdb/10-grafana-reader.sh run against
    it as the postgres image runs it (reader password ``reader-secret``); its URL."""
    import psycopg

    with psycopg.connect(postgres.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE gateway")
    env = {
        **os.environ,
        "POSTGRES_USER": "gateway",
        "POSTGRES_DB": "gateway",
        "LEDGER_GRAFANA_PASSWORD": "reader-secret",
        "PGHOST": "127.0.0.1",
        "PGPORT": str(postgres.port),
        "PATH": f"{postgres.bindir}:{os.environ['PATH']}",
    }
    script = (
        Path(__file__).resolve().parent.parent / "deploy" / "postgres" / "initdb" / "10-grafana-reader.sh"
    )
    result = subprocess.run(["sh", str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return postgres.url.rsplit("/", 1)[0] + "/gateway"
