"""A real ``redis-server`` on 127.0.0.1 for the store tests, started on a free port and stopped after.

Debian's ``redis-server`` (``.ci/run`` installs it). Without the binary the tests skip and say
why, except under CI, where a missing binary is a failure: CI must run them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["redis_server", "running_redis"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@contextlib.contextmanager
def running_redis(folder: Path) -> Iterator[str]:
    """A persistence-free ``redis-server`` on a free loopback port for the block's duration."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise FileNotFoundError("redis-server is not installed (apt-get install redis-server)")
    port = _free_port()
    cmd = [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no",
           "--dir", str(folder), "--protected-mode", "yes"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while True:
            assert proc.poll() is None, "redis-server exited at start"
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "redis-server did not listen within 20 s"
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``redis://127.0.0.1:<port>/0`` of a fresh, persistence-free redis-server."""
    if shutil.which("redis-server") is None:
        message = (
            "REDIS-SERVER IS NOT INSTALLED: the shared-store tests did not run (apt-get install redis-server)"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    with running_redis(tmp_path_factory.mktemp("redis")) as url:
        yield url
