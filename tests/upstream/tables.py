"""The verdict tables the judge suites (test_admission.py, test_beta_validate.py)
fill, printed by the conftest at the end of the run."""
from __future__ import annotations

# title -> rows of (section, case, modelplane validate, the other judge, note).
TABLES: dict[str, list[tuple[str, str, str, str, str]]] = {}


def write(terminalreporter) -> None:
    """Each non-empty table as aligned columns, with its count of cases and disagreements."""
    for title, table in TABLES.items():
        if not table:
            continue
        other = title.split(" vs ", 1)[-1].upper()
        rows = [("SECTION", "CASE", "MODELPLANE VALIDATE", other, "NOTE"), *table]
        widths = [min(60, max(len(r[i]) for r in rows)) for i in range(4)]
        terminalreporter.section(title)
        for r in rows:
            terminalreporter.write_line("  ".join(c[:w].ljust(w) for c, w in zip(r, widths)) + "  " + r[4])
        disagree = sum(1 for r in table if r[4].startswith("DISAGREE"))
        terminalreporter.write_line(f"{len(table)} cases, {disagree} disagreements")
