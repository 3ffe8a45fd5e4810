"""The conformance server (tests/llm_quirks.py) as the tests hold it: started in
a subprocess on a free port, asked what it received and how many calls it
answered at once. Kept apart from the server, which changes with the quirks
of real servers, while this changes with what the tests ask."""

import contextlib
import json
import subprocess
import sys
import time
import urllib.request

from tests.llm_quirks import QUIRKS, ROOT, answer_text
from tests.llm_server import free_port


class RunningQuirks:
    """The server in a subprocess, and what the tests ask of it."""

    def __init__(self, port: int, process: subprocess.Popen):
        self.root = f"http://127.0.0.1:{port}"
        self.process = process

    def url(self, quirk: str) -> str:
        assert quirk in QUIRKS, quirk
        return f"{self.root}/{quirk}/v1"

    def requests(self) -> list[dict]:
        return self._call("/_requests")

    def reset(self) -> None:
        self._call("/_reset", data=b"")

    def answer_of(self, quirk: str, prompt: str) -> str:
        """The answer `quirk` sends to a conversation whose last message is `prompt`."""
        return answer_text(quirk, [{"role": "user", "content": prompt}])

    def in_flight(self) -> int:
        return self._call("/_in_flight")["now"]

    def in_flight_max(self) -> int:
        return self._call("/_in_flight")["max"]

    def _call(self, path: str, data: bytes | None = None):
        with urllib.request.urlopen(self.root + path, data=data, timeout=5) as response:
            return json.loads(response.read())


@contextlib.contextmanager
def running_quirks_server(timeout: float = 20):
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.llm_quirks", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    server = RunningQuirks(port, process)
    try:
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(OSError):
                if server._call("/healthz")["status"] == "ok":
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the quirks server did not start")
            time.sleep(0.05)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
