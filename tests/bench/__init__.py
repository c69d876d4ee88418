"""Benchmarks, run by ``make bench`` (``python -m tests.bench``).

Each ``bench_*.py`` module here exposes ``run() -> list[dict]``: one row per
measurement, all rows of a module sharing their keys. Timing targets live
here, never in the test suite.
"""
