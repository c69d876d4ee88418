"""The registry of Modelplane functions: name -> ``functions/<name>/fn.py``.

A function is registered only when its logic exists; there are no
placeholders. Function folders carry dashes (they are package names), so
``fn.py`` is loaded by path rather than imported as a module.
"""
from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

_HERE = Path(__file__).resolve().parent

ALL = (
    "compose-inference-class",
    "compose-inference-cluster",
    "compose-inference-gateway",
    "compose-model-deployment",
    "compose-model-replica",
    "compose-model-endpoint",
    "compose-model-service",
    "compose-model-cache",
)


def available() -> list[str]:
    """Functions whose fn.py exists in this installation."""
    return list(_available())


@cache
def _available() -> tuple[str, ...]:
    # An installation does not change under a running process; every render asks.
    return tuple(name for name in ALL if (_HERE / name / "fn.py").is_file())


def canonical(name: str) -> str:
    """``modelplane-compose-x`` (installed Function name) -> ``compose-x``."""
    return name.removeprefix("modelplane-")


@cache
def load(name: str) -> Callable:
    """The ``compose`` callable of function ``name``.

    Accepts the installed Function object name too
    (``modelplane-compose-model-deployment``), which is what Compositions use.
    """
    name = canonical(name)
    path = _HERE / name / "fn.py"
    if name not in ALL or not path.is_file():
        known = ", ".join(available()) or "none"
        raise KeyError(f"unknown function {name!r}; this build has: {known}")
    module_name = "modelplane.functions." + name.replace("-", "_")
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module.compose
