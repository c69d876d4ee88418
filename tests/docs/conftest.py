"""The documentation's tests: every test under tests/docs is marked ``docs``.

``make docs-test`` runs them (and ``.ci/run`` does); ``make test`` leaves them out, as they
build the site and start a browser.
"""
from __future__ import annotations

from pathlib import Path

import pytest

_HERE = Path(__file__).parent


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _HERE in Path(item.fspath).parents:
            item.add_marker(pytest.mark.docs)
