"""Semantic versions (semver 2.0.0) as the Kubernetes DRA ``semver()`` sees them.

Accepted text is strict ``MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]``, the form
Kubernetes' CEL ``semver("...")`` and DRA ``version`` attributes parse:

- all three numeric parts are required; ``v1.2.3`` and ``1.2`` are rejected
  (no normalisation: the same selector must mean the same thing here and in
  the cluster's DRA scheduler),
- numeric parts and numeric pre-release identifiers have no leading zeros,
- identifiers are non-empty runs of ``[0-9A-Za-z-]``.

Precedence follows semver 2.0 section 11: numeric parts compare numerically; a
version with a pre-release sorts before the same version without one;
pre-release identifiers compare left to right, numeric ones numerically and
below alphanumeric ones, and a shorter list sorts first when all else ties.
Build metadata is kept for ``str()`` but ignored by equality, ordering and
hashing (``1.0.0+a == 1.0.0+b``).

Bad input raises :class:`VersionError` (a ``ValueError``) naming the input.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["Version", "VersionError"]

MAX_CHARS = 256

_NUM = r"0|[1-9][0-9]*"
_IDENT = r"[0-9A-Za-z-]+"
_GRAMMAR = re.compile(
    rf"(?P<major>{_NUM})\.(?P<minor>{_NUM})\.(?P<patch>{_NUM})"
    rf"(?:-(?P<pre>{_IDENT}(?:\.{_IDENT})*))?"
    rf"(?:\+(?P<build>{_IDENT}(?:\.{_IDENT})*))?"
)
_ACCEPTED = "want MAJOR.MINOR.PATCH with optional -prerelease and +build, like 1.2.3 or 1.0.0-rc.1"


class VersionError(ValueError):
    """A string that is not a strict semantic version."""


@functools.total_ordering
@dataclass(frozen=True, eq=False, slots=True)
class Version:
    """A parsed semantic version; compare with ``==``, ``<`` or :meth:`compare_to`."""

    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()
    build: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Version:
        """Parse strict semver text; raises VersionError with the reason."""
        if not isinstance(text, str):
            raise VersionError(f"invalid version {text!r}: not a string; {_ACCEPTED}")
        if len(text) > MAX_CHARS:
            raise VersionError(f"invalid version {text[:40]!r}...: longer than {MAX_CHARS} characters")
        m = _GRAMMAR.fullmatch(text)
        if m is None:
            raise VersionError(f"invalid version {text!r}: {_ACCEPTED}")
        pre = tuple(m.group("pre").split(".")) if m.group("pre") else ()
        for ident in pre:
            if ident.isdigit() and len(ident) > 1 and ident[0] == "0":
                raise VersionError(f"invalid version {text!r}: numeric pre-release {ident!r} has a leading zero")
        build = tuple(m.group("build").split(".")) if m.group("build") else ()
        return cls(int(m.group("major")), int(m.group("minor")), int(m.group("patch")), pre, build)

    def _key(self) -> tuple:
        # A release (no pre-release) outranks every pre-release of the same triple: (1,) > (0, ...).
        if not self.prerelease:
            return (self.major, self.minor, self.patch, (1,))
        idents = tuple((0, int(i), "") if i.isdigit() else (1, 0, i) for i in self.prerelease)
        return (self.major, self.minor, self.patch, (0, idents))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other: Version) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def compare_to(self, other: Version) -> int:
        """-1, 0 or 1 by semver precedence."""
        a, b = self._key(), other._key()
        return (a > b) - (a < b)

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(self.prerelease)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __repr__(self) -> str:
        return f"Version({str(self)!r})"
