"""A real ``mediaforge serve`` on loopback for the suites: SQLite by default, PostgreSQL when
MEDIAFORGE_TEST_DB=postgres (a fresh schema of MEDIAFORGE_TEST_PG). Accounts come from the
operator's CLI (``mediaforge accounts create --json``), as an operator makes them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
ENGINE = "postgres" if os.environ.get("MEDIAFORGE_TEST_DB") == "postgres" else "sqlite"


@dataclass
class Account:
    account_id: str
    api_key: str
    webhook_secret: str


class Service:
    def __init__(self, name: str, role: str = "all", env: dict[str, str] | None = None):
        self.dir = tempfile.mkdtemp(prefix=f"mediaforge-py-{name}-")
        self.schema = None
        if ENGINE == "postgres":
            server = os.environ["MEDIAFORGE_TEST_PG"]
            self.schema = f"py_{name}_{uuid.uuid4().hex[:10]}"
            subprocess.run(["psql", server, "-qc", f"CREATE SCHEMA {self.schema}"], check=True, capture_output=True)
            sep = "&" if "?" in server else "?"
            self.db = f"{server}{sep}options={quote(f'-c search_path={self.schema}')}"
        else:
            self.db = f"sqlite:{os.path.join(self.dir, 'db.sqlite')}"
        self.env = {
            **os.environ,
            "MEDIAFORGE_DB": self.db,
            "MEDIAFORGE_DATA_DIR": self.dir,
            "MEDIAFORGE_SECRET": "python-client-test-secret",
            "MEDIAFORGE_RATE_LIMIT_PER_MINUTE": "1000000",
            "MEDIAFORGE_WORKER_IDLE_MS": "50",
            "MEDIAFORGE_SIMULATOR_LATENCY_MS": "200",
            "MEDIAFORGE_SIMULATOR_FAIL_WHEN_PROMPT_CONTAINS": "PLEASE-FAIL",
            "MEDIAFORGE_WEBHOOK_ALLOW_PRIVATE": "1",
            "MEDIAFORGE_WEBHOOK_ALLOW_INSECURE": "1",
            "MEDIAFORGE_UPLOAD_MAX_BYTES": str(400 * 1000 * 1000),
            **(env or {}),
        }
        self.process = subprocess.Popen(
            ["node", "bin/mediaforge.js", "serve", "--port", "0", "--migrate", "--role", role],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.output: list[str] = []
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)
            found = re.search(r"mediaforge listening on (http://\S+)", line)
            if found:
                self.url = found.group(1)
                break
        else:
            raise RuntimeError("serve exited:\n" + "".join(self.output[-50:]))
        # Keep draining its output so that the server never blocks on a full pipe.
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)

    def cli(self, *args: str) -> Any:
        done = subprocess.run(["node", "bin/mediaforge.js", *args, "--db", self.db, "--json"], cwd=ROOT, env=self.env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"mediaforge {' '.join(args)}: {done.stderr}")
        return json.loads(done.stdout)

    def account(self, credits: int = 100_000, language: str | None = None) -> Account:
        out = self.cli("accounts", "create", "--credits", str(credits), *(["--language", language] if language else []))
        return Account(out["accountId"], out["apiKey"], out["webhookSecret"])

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        shutil.rmtree(self.dir, ignore_errors=True)
        if self.schema:
            subprocess.run(["psql", os.environ["MEDIAFORGE_TEST_PG"], "-qc", f"DROP SCHEMA {self.schema} CASCADE"], capture_output=True)


@pytest.fixture(scope="session")
def service() -> Iterator[Service]:
    running = Service("all")
    yield running
    running.stop()


@pytest.fixture(scope="session")
def api_only() -> Iterator[Service]:
    """A serve with no worker: its tasks are accepted and never run (they never finish)."""
    running = Service("api", role="api")
    yield running
    running.stop()


@pytest.fixture(scope="session")
def limited() -> Iterator[Service]:
    """A serve whose rate limit is two requests a minute per key."""
    running = Service("limited", role="api", env={"MEDIAFORGE_RATE_LIMIT_PER_MINUTE": "2"})
    yield running
    running.stop()


@pytest.fixture()
def account(service: Service) -> Account:
    return service.account()


MODEL = "vendor_d/family_d/reference-to-video"
INPUT: dict[str, Any] = {
    "prompt": "The cat of Picture 1 jumps like the one in <Video 1>.",
    "reference_image_urls": ["https://example.com/cat.png"],
}
