"""What a composition function refuses although the API server admits it.

Admission checks an XR against its schema and CEL rules; the function that
composes it reads it again and may still fail it, with a Fatal result naming
the field. A ModelDeployment whose device selector calls ``matches()`` is
one: a valid string to the schema, refused by ``compose-model-deployment``
because DRA selectors get no regular expressions (``modelplane.cel.guards``).
``modelplane validate`` reports such an XR up front, in the function's words.

Each check here *is* the function's own check, called on the admitted
(defaulted) object, so the two can never disagree: ``CHECKS`` maps a kind to
the function that composes it and the call it makes. Only an object the
schema admitted reaches a check, as only such an object reaches the
function; its Pydantic model, generated from the same schema, parses it.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from modelplane.errors import InputError

from .finding import INVALID, Problem

__all__ = ["CHECKS", "Check", "Refused", "refused"]


@dataclass(frozen=True)
class Check:
    """The function that composes a kind, and its check: raises InputError on what it refuses."""

    function: str
    run: Callable[[dict], None]


@dataclass(frozen=True)
class Refused:
    """A function's refusal: the function's name and its first problem (a Fatal stops at one)."""

    function: str
    problem: Problem


def _model_deployment(obj: dict) -> None:
    # Imported here: the CEL engine and the generated model take seconds to import, and
    # simulate and lab import this package only for its defaults.
    from modelplane.deployment.validate import check_selectors
    from modelplane.pipeline.xr import parse
    from modelplane.schemas.model_deployment import ModelDeployment

    check_selectors(parse(ModelDeployment, obj))  # the two calls compose-model-deployment's fn.py starts with


# (apiVersion, kind) -> the check of the function that composes it.
CHECKS: Mapping[tuple[str, str], Check] = {
    ("modelplane.ai/v1alpha1", "ModelDeployment"): Check("compose-model-deployment", _model_deployment),
}


def refused(obj: Mapping[str, Any]) -> Refused | None:
    """What the function composing the admitted ``obj`` would refuse in it; None when nothing."""
    check = CHECKS.get((obj.get("apiVersion"), obj.get("kind")))
    if check is None:
        return None
    try:
        check.run(dict(obj))
    except InputError as err:
        return Refused(check.function, Problem(err.field, err.message, reason=INVALID))
    return None
