"""A Redis of the test's own, which the fault tests stop and restart."""

import socket
import subprocess
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ThrowawayRedis:
    """A Redis of the test's own, on its own port, that the test can stop and restart."""

    def __init__(self, tmp_path: Path):
        self.port = free_port()
        self.dir = tmp_path
        self.process = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self):
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.dir)],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        import redis

        for _ in range(50):
            try:
                redis.Redis.from_url(self.url).ping()
                return
            except redis.ConnectionError:
                time.sleep(0.1)
        raise RuntimeError("throwaway redis did not start")

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=10)
