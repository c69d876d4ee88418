"""The shape tables of the functions' tests: each row composes an XR and checks
one composed resource by its key."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from tests.support import desired, fatal


@dataclass
class Shape:
    name: str
    x: dict
    key: str
    check: Callable[[dict], Any]
    required: dict | None = None  # the function's required resources; None: the test's default


def assert_shape(rsp: fnv1.RunFunctionResponse, case: Shape) -> None:
    """The function succeeded and the resource under ``case.key`` passes ``case.check``."""
    assert fatal(rsp) is None
    obj = desired(rsp)[case.key]
    assert case.check(obj), obj
