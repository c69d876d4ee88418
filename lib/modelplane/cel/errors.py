"""The CEL error tree, independent of the engine.

    CELError            compile (syntax) or runtime failure; one trimmed line
     +-- CELRejected    refused by a guard before or during evaluation:
                        too long, too complex, too deep, too many
                        comprehensions, over the step or CPU budget

Messages are one line and at most ``MAX_MESSAGE`` characters, because engine
errors can quote kilobytes of activation text and ours end up in conditions.
"""
from __future__ import annotations

import re

__all__ = ["MAX_MESSAGE", "CELError", "CELRejected", "one_line"]

MAX_MESSAGE = 240

_SPACE = re.compile(r"\s+")


def one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    """Collapse whitespace and cut to ``limit`` characters (with an ellipsis)."""
    flat = _SPACE.sub(" ", str(text)).strip()
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."


class CELError(Exception):
    """A CEL expression failed to compile or evaluate."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))

    @property
    def message(self) -> str:
        return str(self.args[0])


class CELRejected(CELError):
    """A CEL expression refused by a guard (size, depth, comprehensions, budget).

    ``transient`` marks a rejection that depends on the moment rather than on
    the expression and its input (the CPU-time deadline: a garbage collection
    can land inside any evaluation), so callers must not remember it.
    """

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient
