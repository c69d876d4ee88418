"""Benchmark rows as an aligned table (``python -m tests.bench`` and ``python -m tests.lab.bench``)."""
from __future__ import annotations


def table(rows: list[dict]) -> list[str]:
    """Rows as aligned columns, header first; keys in first-seen order."""
    keys: list[str] = []
    for row in rows:
        keys += [k for k in row if k not in keys]
    cells = [[_cell(row.get(k, "")) for k in keys] for row in rows]
    widths = [max(len(k), *(len(r[i]) for r in cells)) for i, k in enumerate(keys)]
    line = lambda vals: "  ".join(v.rjust(w) for v, w in zip(vals, widths))
    return [line(keys), line(["-" * w for w in widths]), *(line(r) for r in cells)]


def _cell(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)
