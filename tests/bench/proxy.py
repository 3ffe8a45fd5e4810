"""The compose file's proxy for the benchmarks: Debian's nginx running
`deploy/nginx.conf` itself, with the two upstreams on loopback ports instead of
Docker's service names (no Docker here)."""

import re
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
CONFIG = ROOT / "deploy" / "nginx.conf"


def nginx_missing() -> str | None:
    if shutil.which("nginx") is None:
        return "nginx is not installed (Debian: apt-get install nginx-light)"
    return None


def local_config(listen: int, upstreams: dict[str, int], folder: Path) -> str:
    """deploy/nginx.conf with loopback upstreams, and its files in `folder`."""
    text = CONFIG.read_text()
    text = re.sub(r"^\s*resolver [^;]*;\n", "", text, flags=re.M)
    for name, port in upstreams.items():
        text, found = re.subn(rf"server {name}:8000 resolve;", f"server 127.0.0.1:{port};", text)
        if not found:
            raise ValueError(f"deploy/nginx.conf has no upstream {name}")
    text = text.replace("listen 8080;", f"listen 127.0.0.1:{listen};")
    temp = "\n".join(
        f"    {kind}_temp_path {folder / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return text.replace("http {", f"http {{\n{temp}", 1)


@contextmanager
def running_proxy(upstreams: dict[str, int]):
    """Yields the proxy's base URL; nginx runs in the foreground of its process."""
    folder = Path(tempfile.mkdtemp(prefix="shs-bench-nginx-"))
    port = _free_port()
    conf = folder / "nginx.conf"
    conf.write_text(local_config(port, upstreams, folder))
    process = subprocess.Popen(
        ["nginx", "-p", str(folder), "-c", str(conf), "-e", str(folder / "error.log"),
         "-g", f"daemon off; pid {folder / 'nginx.pid'};"],
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield base, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(folder, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
