"""Shared fixtures for the interop tests: the `silentshard-interop` binary, driven over JSON.

The binary is not built here. Set SILENTSHARD_INTEROP to its path (relative paths are taken from
the repository root); the default is .build/debug/silentshard-interop. A missing binary fails every
test with a message that says how to build it: nothing is skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BINARY = ".build/debug/silentshard-interop"
TIMEOUT_SECONDS = 60


def binary_path() -> Path:
    path = Path(os.environ.get("SILENTSHARD_INTEROP", DEFAULT_BINARY))
    return path if path.is_absolute() else REPO_ROOT / path


class Interop:
    """Runs one request per process: {"op": op, "cases": cases} → {"results": [...]}."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def run_raw(self, payload: bytes) -> tuple[int, dict, str]:
        """Sends arbitrary bytes; returns (exit status, decoded stdout, stderr). Fails the test when
        the output is not one JSON object (a crash, a trap, stray prints)."""
        process = subprocess.run(
            [str(self.path)], input=payload, capture_output=True, timeout=TIMEOUT_SECONDS
        )
        stderr = process.stderr.decode(errors="replace")
        try:
            response = json.loads(process.stdout)
        except ValueError:
            pytest.fail(
                f"{self.path.name} exited {process.returncode} without a JSON response.\n"
                f"stdout: {process.stdout[:500]!r}\nstderr: {stderr[:2000]}"
            )
        if not isinstance(response, dict):
            pytest.fail(f"response is not a JSON object: {response!r}")
        return process.returncode, response, stderr

    def call(self, op: str, cases: list) -> list:
        """The results of a well-formed request, one per case, in order."""
        status, response, stderr = self.run_raw(json.dumps({"op": op, "cases": cases}).encode())
        if status != 0 or "error" in response:
            pytest.fail(f"request {op!r} failed (exit {status}): {response}\nstderr: {stderr[:2000]}")
        results = response["results"]
        assert len(results) == len(cases), f"{op}: {len(cases)} cases, {len(results)} results"
        return results


@pytest.fixture(scope="session")
def interop() -> Interop:
    path = binary_path()
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(
            f"silentshard-interop binary not found at {path}.\n"
            "Build it with `swift build --product silentshard-interop` (from the repository root),\n"
            "or point SILENTSHARD_INTEROP at an existing build, e.g.\n"
            "SILENTSHARD_INTEROP=.build-interop/debug/silentshard-interop",
            pytrace=False,
        )
    return Interop(path)

