"""The per-model typing, checked by mypy (Debian's): tests/typing/ok.py must type-check; in
tests/typing/fail.py every line marked `# E` must get an error, and no other line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(__file__)
SRC = os.path.join(HERE, "..", "src")
# One cache for the three runs: the package is analysed once (~1 min on a loaded machine), not three times.
CACHE = os.path.join(tempfile.gettempdir(), f"mediaforge-mypy-{os.getuid()}")


def mypy(path: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYPYPATH": SRC}
    args = [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--hide-error-context", "--cache-dir", CACHE, "--show-error-codes", path]
    return subprocess.run(args, env=env, capture_output=True, text=True, check=False)


def test_the_calls_that_must_type_check_do() -> None:
    done = mypy(os.path.join(HERE, "typing", "ok.py"))
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_call_that_must_fail_fails_and_nothing_else() -> None:
    path = os.path.join(HERE, "typing", "fail.py")
    done = mypy(path)
    errors = {int(m.group(1)) for m in re.finditer(r"fail\.py:(\d+): error:", done.stdout)}
    with open(path) as source:
        marked = {n for n, line in enumerate(source, start=1) if line.rstrip().endswith("# E")}
    assert len(marked) == 9
    assert errors == marked, done.stdout


def test_the_package_itself_is_strict_clean() -> None:
    done = mypy(os.path.join(SRC, "mediaforge"))
    assert done.returncode == 0, done.stdout + done.stderr
