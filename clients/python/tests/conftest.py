"""Starts a real `tidemark serve`, built from this checkout, on loopback."""

import json
import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

ROOT = pathlib.Path(__file__).resolve().parents[3]
TOKEN = "pytest-admin-token-6f1d2c9a8b7e"


def _binary(tmp: pathlib.Path) -> str:
    if os.environ.get("TIDEMARK_BIN"):
        return os.environ["TIDEMARK_BIN"]
    out = tmp / "tidemark"
    subprocess.run(["go", "build", "-o", str(out), "./cmd/tidemark"], cwd=ROOT, check=True, timeout=600)
    return str(out)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def server():
    """Yields (base_url, token, data_dir) of a server that lives for the session."""
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        binary = _binary(tmp)
        tokens = tmp / "tokens.json"
        tokens.write_text(json.dumps([{"token": TOKEN, "name": "pytest", "collections": ["*"], "write": True}]))
        tokens.chmod(0o600)
        data = tmp / "data"
        port = _free_port()
        proc = subprocess.Popen(
            [binary, "serve", "--data", str(data), "--addr", f"127.0.0.1:{port}", "--tokens", str(tokens)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("tidemark serve did not start: " + proc.stderr.read().decode(errors="replace"))
            time.sleep(0.05)
        try:
            yield base, TOKEN, data
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
