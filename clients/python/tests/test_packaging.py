"""The wheel and the sdist, built offline (Debian's python3-build, --no-isolation, hatchling), and
the README's Python block run as pasted against the installed wheel and a real serve."""

from __future__ import annotations

import email.parser
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from typing import Any

from conftest import Service

PROJECT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def build(out: str) -> tuple[str, str]:
    work = os.path.join(out, "project")
    shutil.copytree(PROJECT, work, ignore=shutil.ignore_patterns("__pycache__", ".mypy_cache", ".pytest_cache", "dist"))
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", os.path.join(out, "dist"), work], capture_output=True, text=True, check=False, env={**os.environ, "PIP_NO_INDEX": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    files = os.listdir(os.path.join(out, "dist"))
    wheel = next(f for f in files if f.endswith(".whl"))
    sdist = next(f for f in files if f.endswith(".tar.gz"))
    return os.path.join(out, "dist", wheel), os.path.join(out, "dist", sdist)


def test_wheel_and_sdist_and_the_readme_block(service: Service, tmp_path: Any) -> None:
    wheel, sdist = build(str(tmp_path))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(archive.read(metadata_name).decode())
        archive.extractall(os.path.join(tmp_path, "site"))
    assert {"mediaforge/__init__.py", "mediaforge/py.typed", "mediaforge/_generated/models.py", "mediaforge/webhooks.py"} <= names
    assert not any("tests/" in n for n in names)
    assert metadata["Name"] == "mediaforge" and metadata["Requires-Python"] == ">=3.11"
    assert [re.split(r"[<>=;\s]", r)[0] for r in metadata.get_all("Requires-Dist") or []] == ["httpx"]
    with tarfile.open(sdist) as archive:
        assert any(n.endswith("src/mediaforge/_generated/models.py") for n in archive.getnames())
    print(f"wheel {os.path.basename(wheel)}: {os.path.getsize(wheel)} bytes; sdist {os.path.getsize(sdist)} bytes")

    with open(os.path.join(PROJECT, "README.md")) as readme:
        block = re.search(r"```python\n(.*?)```", readme.read(), re.S)
    assert block is not None
    acct = service.account()
    env = {**os.environ, "PYTHONPATH": os.path.join(tmp_path, "site"), "MEDIAFORGE_API_KEY": acct.api_key, "MEDIAFORGE_BASE_URL": service.url}
    script = "import mediaforge, sys; assert mediaforge.__file__.startswith(sys.argv[1]), mediaforge.__file__\n"
    done = subprocess.run([sys.executable, "-c", script + block.group(1), os.path.join(tmp_path, "site")], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "succeeded" in done.stdout and re.search(r"saved \d+ bytes", done.stdout), done.stdout
