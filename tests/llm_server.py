"""The shipped demo LLM server (llm/demo_server.py) in a subprocess, on a free loopback port.

Tests talk to it over real HTTP through the production client, as the
platform talks to a hosted API.
"""

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class DemoLLMServer:
    """Start and stop one demo server; `base_url` is what a system stores."""

    def __init__(self, *args: str, env: dict | None = None):
        self.args = args
        self.env = env or {}
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 20) -> None:
        # A file, not a pipe: a pipe nobody reads would stall the server once full.
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "llm.demo_server", "--port", str(self.port), *self.args],
            cwd=ROOT,
            env={**os.environ, **self.env},
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.log.seek(0)
                raise RuntimeError(f"demo LLM server exited: {self.log.read().decode()}")
            with contextlib.suppress(OSError):
                if self._get("/healthz")["status"] == "ok":
                    return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"demo LLM server did not answer /healthz within {timeout} s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None:
            self.log.close()

    def _get(self, path: str) -> dict:
        return _get(self.base_url, path)


def chat_requests(base_url: str) -> int:
    """How many chat requests the demo server at `base_url` has received so far."""
    return _get(base_url, "/stats")["chat_requests"]


def _get(base_url: str, path: str) -> dict:
    root = base_url.removesuffix("/v1")
    with urllib.request.urlopen(root + path, timeout=2) as response:
        return json.loads(response.read())


@contextlib.contextmanager
def running_demo_server(*args: str, env: dict | None = None) -> Iterator[DemoLLMServer]:
    server = DemoLLMServer(*args, env=env)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def run_closing(coroutine):
    """`asyncio.run`, closing the client's connection pool of that event loop
    before the loop ends (a pool left open is only collected at exit)."""
    from llm.client import close_pool

    async def main():
        try:
            return await coroutine
        finally:
            await close_pool()

    return asyncio.run(main())
