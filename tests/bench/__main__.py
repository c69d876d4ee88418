"""``python -m tests.bench [NAME...]``: run every bench_*.py module (or those
named) and print each one's rows as a table."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

from tests.bench.columns import table


def modules(names: list[str]) -> list[str]:
    found = sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if m.name.startswith("bench_"))
    if not names:
        return found
    wanted = [n if n.startswith("bench_") else f"bench_{n}" for n in names]
    missing = [n for n in wanted if n not in found]
    if missing:
        raise SystemExit(f"unknown benchmark(s): {', '.join(missing)}; have {', '.join(found)}")
    return wanted


def main(argv: list[str]) -> int:
    for name in modules(argv):
        module = importlib.import_module(f"{__package__}.{name}")
        result = module.run()
        # a module returns its rows, or several titled tables ({title: rows})
        parts = result.items() if isinstance(result, dict) else [("", result)]
        for title, rows in parts:
            print(f"## {name.removeprefix('bench_')}{': ' + title if title else ''}")
            print("\n".join(table(rows)))
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
