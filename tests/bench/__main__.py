"""`make bench`: runs every benchmark module and prints each figure with its
baseline ratio. Benchmarks are not tests: they measure, they do not assert.

Each benchmark module has a `run()` function and runs in a process of its
own, so that one benchmark's database or memory use cannot affect another.

Usage: python -m tests.bench [name ...]   (no name: all of them)
"""

import pkgutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def main(argv: list[str]) -> int:
    import tests.bench as package

    names = sorted(
        module.name
        for module in pkgutil.iter_modules(package.__path__)
        if module.name.startswith("bench_")
    )
    wanted = [name if name.startswith("bench_") else f"bench_{name}" for name in argv]
    failed = []
    for name in wanted or names:
        if name not in names:
            print(f"unknown benchmark {name!r}; have: {', '.join(names) or 'none'}")
            return 2
        print(f"\n=== {name} ===", flush=True)
        started = time.perf_counter()
        code = f"import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'shs_platform.settings'); from tests.bench import {name}; {name}.run()"  # noqa: E501
        result = subprocess.run([sys.executable, "-c", code], cwd=ROOT)
        print(f"({name} took {time.perf_counter() - started:.1f} s)", flush=True)
        if result.returncode:
            failed.append(name)
    if not names:
        print("no benchmarks yet")
    if failed:
        print(f"benchmarks that did not finish: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
