"""Reading an XR through its generated Pydantic model, with errors users can act on.

Admission normally rejects bad XRs before a function sees them, but a
function must not trust that (``crossplane render`` skips admission, and an
XRD can change under a running XR). A validation failure becomes an
``InputError`` whose field is the Kubernetes-style path of the first problem.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import pydantic

from modelplane.errors import InputError

M = TypeVar("M", bound=pydantic.BaseModel)


def field_path(loc: tuple[Any, ...]) -> str:
    """('spec', 'engines', 0, 'name') -> 'spec.engines[0].name'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def parse(model: type[M], data: Mapping[str, Any]) -> M:
    """Validate ``data`` as ``model`` or raise InputError naming the field."""
    try:
        return model.model_validate(dict(data))
    except pydantic.ValidationError as err:
        first = err.errors()[0]
        path = field_path(tuple(first.get("loc", ())))
        msg = first.get("msg", "invalid value")
        more = err.error_count() - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        raise InputError(path, f"{msg}; fix this field and apply again{suffix}") from None
