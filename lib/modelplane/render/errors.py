"""The one error render raises on purpose.

``RenderError`` carries the message the real CLI prints after
``crossplane: error: ``; the CLI adds nothing but that prefix.
"""
from __future__ import annotations

from modelplane.errors import ModelplaneError


class RenderError(ModelplaneError):
    """Rendering failed; ``str(err)`` reads like crossplane render's error."""

    def wrap(self, context: str) -> RenderError:
        """The same failure with ``context: `` in front, as Go's errors.Wrap."""
        return RenderError(f"{context}: {self}")
