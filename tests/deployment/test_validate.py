"""validate: every device selector must compile as DRA CEL within the guards,
or the deployment is rejected naming the first selector that does not."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from modelplane.deployment.validate import check_selectors
from modelplane.errors import InputError

from tests.deployment.builders import SELECTOR, engine, member, model_deployment

DEEP = "(" * 40 + "true" + ")" * 40  # past the nesting guard
REDUCE = "[1, 2].reduce(x, y, x + y) > 0"  # a cel-python extension the guards refuse
SYNTAX = 'device.attributes["gpu.nvidia.com"'


@dataclass(frozen=True)
class Case:
    name: str
    engines: list[dict]
    want: str | None  # the field named, or None: accepted
    message: str = ""  # in the message


def _selectors(*cel: str) -> list[dict]:
    return [engine(members=[member(selectors=cel)])]


CASES = [
    Case("a selector that compiles", _selectors(SELECTOR), None),
    Case("several that compile", _selectors(SELECTOR, "true", 'device.driver == "gpu.nvidia.com"'), None),
    Case("a member without a nodeSelector", [engine(members=[member(selectors=None)])], None),
    Case("a device without selectors", _selectors(), None),
    Case("a syntax error", _selectors(SYNTAX), "spec.engines[0].members[0].nodeSelector.devices[0].selectors[0].cel",
         "syntax error"),
    Case("a guard: nesting", _selectors(DEEP), "spec.engines[0].members[0].nodeSelector.devices[0].selectors[0].cel"),
    Case("a guard: reduce", _selectors(REDUCE), "spec.engines[0].members[0].nodeSelector.devices[0].selectors[0].cel"),
    Case("the second selector", _selectors(SELECTOR, SYNTAX),
         "spec.engines[0].members[0].nodeSelector.devices[0].selectors[1].cel"),
    Case("the first bad one is named", _selectors(SELECTOR, DEEP, SYNTAX),
         "spec.engines[0].members[0].nodeSelector.devices[0].selectors[1].cel"),
    Case("a later member", [engine(members=[member(), member(role="Worker", selectors=[SYNTAX])])],
         "spec.engines[0].members[1].nodeSelector.devices[0].selectors[0].cel"),
    Case("a later engine", [engine("e"), engine("f", members=[member(selectors=[SYNTAX])])],
         "spec.engines[1].members[0].nodeSelector.devices[0].selectors[0].cel"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_check_selectors(case: Case) -> None:
    md = model_deployment(engines=case.engines)
    if case.want is None:
        check_selectors(md)
        return
    with pytest.raises(InputError) as err:
        check_selectors(md)
    assert err.value.field == case.want, f"-want {case.want}, +got {err.value.field}"
    assert case.message in err.value.message


def test_a_later_device() -> None:
    m = member()
    m["nodeSelector"]["devices"].append({"name": "nic", "selectors": [{"cel": SYNTAX}]})
    with pytest.raises(InputError) as err:
        check_selectors(model_deployment(engines=[engine(members=[m])]))
    assert err.value.field == "spec.engines[0].members[0].nodeSelector.devices[1].selectors[0].cel"


def test_the_message_says_how_to_fix_it() -> None:
    with pytest.raises(InputError) as err:
        check_selectors(model_deployment(engines=_selectors(SYNTAX)))
    assert "write a boolean DRA CEL expression" in err.value.message
    assert "\n" not in err.value.message
