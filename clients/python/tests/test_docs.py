"""The Python blocks of the docs run as written: docs/client.md's first task against a live serve,
docs/webhooks.md's verification against a real delivery, and every model page's example
(generated/docs/models/) type-checks against that model's TypedDict."""

from __future__ import annotations

import glob
import http.server
import os
import re
import subprocess
import sys
import threading
from typing import Any

from conftest import INPUT, MODEL, ROOT, Service
from test_sync_client import PNG

import mediaforge

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "src"))


def marked_block(page: str, marker: str) -> str:
    with open(os.path.join(ROOT, page)) as source:
        found = re.search(rf"<!-- {marker}:start -->\n```python\n(.*?)```\n<!-- {marker}:end -->", source.read(), re.S)
    assert found is not None, f"{page}: no {marker} block"
    return found.group(1)


def test_the_client_page_block_runs_as_written(service: Service, tmp_path: Any) -> None:
    acct = service.account(1000)  # the library unlocks at 1,000 credits purchased, as the page says
    with open(os.path.join(tmp_path, "cat.png"), "wb") as out:
        out.write(PNG)
    env = {**os.environ, "PYTHONPATH": SRC, "MEDIAFORGE_API_KEY": acct.api_key, "MEDIAFORGE_URL": service.url}
    done = subprocess.run([sys.executable, "-c", marked_block("docs/client.md", "python-example")], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert re.match(r"succeeded https?://\S+", done.stdout), done.stdout


class Once(http.server.BaseHTTPRequestHandler):
    got: list[tuple[dict[str, str], bytes]] = []
    event = threading.Event()

    def do_POST(self) -> None:  # noqa: N802
        Once.got.append((dict(self.headers.items()), self.rfile.read(int(self.headers["content-length"]))))
        Once.event.set()
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_the_webhooks_page_block_verifies_a_real_delivery(service: Service) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Once)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        acct = service.account()
        client = mediaforge.Mediaforge(api_key=acct.api_key, base_url=service.url)
        task = client.tasks.create(model=MODEL, input=INPUT, callback_url=f"http://127.0.0.1:{server.server_address[1]}/cb")
        assert Once.event.wait(60)
        headers, raw_body = Once.got[0]
        scope: dict[str, Any] = {"raw_body": raw_body, "headers": headers, "secret": acct.webhook_secret}
        exec(marked_block("docs/webhooks.md", "python-webhook"), scope)  # noqa: S102 - the page's block, as written
        assert scope["event"]["data"]["taskId"] == task["taskId"]
    finally:
        server.shutdown()


def test_every_model_page_example_type_checks(tmp_path: Any) -> None:
    pages = sorted(glob.glob(os.path.join(ROOT, "generated/docs/models/**/*.md"), recursive=True))
    bodies = []
    for page in pages:
        with open(page) as source:
            found = re.search(r"```python\n(.*?)```", source.read(), re.S)
        assert found is not None, page
        code = found.group(1).replace("import os\n\nfrom mediaforge import Mediaforge\n\n", "")
        bodies.append("def example_%d() -> None:\n%s" % (len(bodies), "".join(f"    {line}\n" for line in code.splitlines())))
    assert len(bodies) == len(mediaforge.MODEL_IDS)
    module = os.path.join(tmp_path, "examples.py")
    with open(module, "w") as out:
        out.write("import os\n\nfrom mediaforge import Mediaforge\n\n\n" + "\n\n".join(bodies))
    from test_types import CACHE

    env = {**os.environ, "MYPYPATH": SRC}
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", CACHE, "--no-error-summary", module], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
