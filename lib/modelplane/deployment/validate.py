"""Checks on a ModelDeployment that its schema cannot express.

Every device selector must compile as DRA CEL within the guards (size,
nesting, comprehensions): a selector that can never evaluate would silently
match nothing, so it is rejected up front with its field path.
"""
from __future__ import annotations

from modelplane.cel import CELError, compile
from modelplane.errors import InputError
from modelplane.schemas.model_deployment import ModelDeployment


def check_selectors(md: ModelDeployment) -> None:
    """Raise InputError naming the first selector that does not compile."""
    for i, engine in enumerate(md.spec.engines):
        for j, member in enumerate(engine.members):
            devices = member.nodeSelector.devices if member.nodeSelector else []
            for k, device in enumerate(devices):
                for n, selector in enumerate(device.selectors or []):
                    try:
                        compile(selector.cel, library="dra")
                    except CELError as err:
                        path = f"spec.engines[{i}].members[{j}].nodeSelector.devices[{k}].selectors[{n}].cel"
                        raise InputError(path, f"{err.message}; write a boolean DRA CEL expression over one "
                                               f"device, e.g. device.attributes[\"gpu.nvidia.com\"].architecture "
                                               f"== \"Hopper\"") from None
