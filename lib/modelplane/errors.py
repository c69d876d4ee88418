"""The error tree of Modelplane.

    ModelplaneError
    ├── InputError        bad user input: FATAL, names the field and the fix
    └── (lib modules add their own leaves: QuantityError, VersionError,
         CELError, ...; each subclasses ValueError where it parses text)

"Not yet" (an input not fetched, a cluster still provisioning) is never an
error: functions report it in a condition and keep what they composed.
"""
from __future__ import annotations


class ModelplaneError(Exception):
    """Base of every error Modelplane raises on purpose."""


class InputError(ModelplaneError):
    """Invalid user input. The runtime turns it into a FATAL result.

    ``field`` is a Kubernetes-style path (``spec.engines[0].members``) and the
    message says what to change.
    """

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)
