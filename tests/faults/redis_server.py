"""A Redis of the test's own, which the fault tests stop and restart."""

import signal
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

    def pause(self):
        """Hang it: connections are still accepted, nothing is answered (a stuck
        or swapping Redis), so every call waits its socket timeout."""
        self.process.send_signal(signal.SIGSTOP)

    def resume(self):
        self.process.send_signal(signal.SIGCONT)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.resume()  # a stopped process does not act on SIGTERM
            self.process.terminate()
            self.process.wait(timeout=10)

    def cache_settings(self, **options) -> dict:
        """settings.CACHES of production (shs_platform/settings.py), on this Redis."""
        return {
            "default": {
                "BACKEND": "shs_platform.cache.ResilientRedisCache",
                "LOCATION": self.url,
                "KEY_PREFIX": "shs",
                "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2, **options},
            }
        }
