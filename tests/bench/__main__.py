"""`make bench`: runs every benchmark module and prints each figure with its
baseline ratio. Benchmarks are not tests: they measure, they do not assert.

Usage: python -m tests.bench [name ...]   (no name: all of them)
"""

import importlib
import os
import pkgutil
import sys
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shs_platform.settings")


def main(argv: list[str]) -> int:
    import tests.bench as package

    names = sorted(
        module.name
        for module in pkgutil.iter_modules(package.__path__)
        if module.name.startswith("bench_")
    )
    wanted = [name if name.startswith("bench_") else f"bench_{name}" for name in argv]
    for name in wanted or names:
        if name not in names:
            print(f"unknown benchmark {name!r}; have: {', '.join(names) or 'none'}")
            return 2
        module = importlib.import_module(f"tests.bench.{name}")
        print(f"\n=== {name} ===")
        started = time.perf_counter()
        module.run()
        print(f"({name} took {time.perf_counter() - started:.1f} s)")
    if not names:
        print("no benchmarks yet")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
