"""CPU time of the processes that serve a benchmark, read from /proc.

The machine is shared while benchmarks run, so wall-clock figures move with
the neighbours' load; the CPU seconds a server, its PostgreSQL backends and
its Redis spend on a fixed amount of work do not (much). Only processes that
belong to the system under test are counted: this process's descendants (the
servers it started), the PostgreSQL backends connected to the benchmark's own
database, and a private Redis server started for the benchmark.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU of one process, None once it has gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS


def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        children.setdefault(parent, []).append(int(entry))
    return children


def descendants(root: int) -> list[int]:
    children, found, todo = _children(), [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def web_processes(root: int) -> list[int]:
    """The web processes a benchmark started below `root`: gunicorn's (master
    and workers) and the proxy's."""
    found = []
    for pid in descendants(root):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if any(name in cmdline.read() for name in (b"gunicorn", b"nginx")):
                    found.append(pid)
        except OSError:
            continue
    return found


def cpu_of(pids) -> float:
    """CPU seconds of these processes together (a process gone counts nothing)."""
    return sum(cpu_seconds(pid) or 0.0 for pid in pids)


def run_threads(threads) -> float:
    """Start every thread, wait for all; the seconds that took."""
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def database_backends(database: str) -> list[int]:
    """PostgreSQL backends serving one database (others' databases are not ours)."""
    import psycopg

    from tests.bench.stack import POSTGRES

    with psycopg.connect(POSTGRES + "/postgres", autocommit=True) as connection:
        rows = connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s", [database]
        ).fetchall()
    return [pid for (pid,) in rows]


class CpuMeter:
    """CPU spent between start() and stop() by the server processes, the
    database's backends and Redis, split by kind. A process that starts while
    the meter runs counts from zero; one that ends (a database connection
    closed after its maximum age) keeps what the last sample saw: samples are
    taken every half second.

    The server processes are `roots` and their descendants when given (one
    system's own, while another system runs beside it: the peer benchmark),
    else every descendant of this process but `skip`."""

    INTERVAL = 0.5

    def __init__(self, database: str, redis_pid: int | None, skip=(), roots=()):
        self.database, self.redis_pid, self.skip = database, redis_pid, set(skip)
        self.roots = list(roots)
        self.first: dict[tuple[str, int], float] = {}
        self.last: dict[tuple[str, int], float] = {}
        self.stopping = threading.Event()
        self.sampler = None

    def _pids(self):
        if self.roots:
            server = self.roots + [pid for root in self.roots for pid in descendants(root)]
        else:
            server = [pid for pid in descendants(os.getpid()) if pid not in self.skip]
        server = [pid for pid in server if pid != self.redis_pid]
        pids = [("server", pid) for pid in server]
        pids += [("postgres", pid) for pid in database_backends(self.database)]
        if self.redis_pid:
            pids.append(("redis", self.redis_pid))
        return pids

    def sample(self, *, starting=False):
        for key in self._pids():
            value = cpu_seconds(key[1])
            if value is None:
                continue
            if starting:
                self.first[key] = value
            self.last[key] = value

    def _keep_sampling(self):
        while not self.stopping.wait(self.INTERVAL):
            self.sample()

    def start(self):
        self.first.clear()
        self.last.clear()
        self.sample(starting=True)
        self.stopping.clear()
        self.sampler = threading.Thread(target=self._keep_sampling, daemon=True)
        self.sampler.start()

    def stop(self) -> dict[str, float]:
        self.stopping.set()
        self.sampler.join()
        self.sample()
        totals = {"server": 0.0, "postgres": 0.0, "redis": 0.0}
        for key, value in self.last.items():
            totals[key[0]] += value - self.first.get(key, 0.0)
        return totals


def wait_until_answering(url: str, seconds: float = 30.0) -> None:
    """A server just started: wait until it answers (any answer), at most `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)


@contextmanager
def private_redis():
    """A Redis server of the benchmark's own, so that its CPU is the benchmark's
    alone (the shared one serves everyone else's work too). Yields (url, pid)."""
    binary = shutil.which("redis-server")
    if not binary:
        yield None, None
        return
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    folder = tempfile.mkdtemp(prefix="shs-bench-redis-")
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", folder, "--loglevel", "warning"],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(50):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"redis://127.0.0.1:{port}/8", process.pid
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)
