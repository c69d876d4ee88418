"""Which pools can hold each member: device matching, done once per deployment.

A member fits a class when every device request is matched by one class
device that satisfies ALL of the request's selectors and has at least
``count`` devices per node left after the member's earlier requests
(requests are resolved in order, each to the first class device that
takes it, so two 4-GPU requests can share an 8-GPU device). Synthetic
devices must be present with enough count, but are not consumed: they
describe the node, they are not handed to pods.

The answer depends only on (member, class), never on the cluster, so it is
computed once per class the fleet uses (the Kubernetes scheduler's
PreFilter) and the per-cluster filters only read it. Each selector is
evaluated at most once per distinct class device (``evaluations`` counts
them), and the matcher below is expected to memoise across calls too.

The matcher is the single seam to CEL: any callable
``(expr, device) -> result`` where the result has ``matched`` and ``error``
attributes. Tests pass a plain function; production uses ``modelplane.cel``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .types import DRA, ClassDevice, Deployment, InferenceClass, Member, ResolvedDevice


class MatchLike(Protocol):
    matched: bool
    error: str | None


DeviceMatcher = Callable[[str, Any], MatchLike]

# Errors can carry pages of activation text; an explanation wants one line.
_ERROR_CHARS = 80


def default_matcher() -> DeviceMatcher:
    """The CEL device matcher, imported on first use so the scheduler (and
    its tests with a fake matcher) do not need the CEL engine loaded."""
    from modelplane.cel.device import match

    return match


@dataclass(frozen=True)
class MemberFit:
    """How a member's pods use one class: the resolved requests and what
    each pod consumes (DRA class device name -> count, sorted by name)."""

    devices: tuple[ResolvedDevice, ...]
    demand: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Misfit:
    """Why a member does not fit a class: the first request no device takes.

    ``selector`` is the expression that was false (or failed) on the class's
    first device, when selectors alone turned the request down; it is empty
    when some device passed every selector but had too few left per node, or
    the class has no devices. The keep phase tells the two apart: a class
    whose attributes no longer satisfy a running replica's selectors holds
    it, one whose counts no longer hold its pods evicts it (``keep.py``).
    """

    request: str
    detail: str
    selector: str = ""


class Matches:
    """Per-deployment match table: ``fit(class_name, member_index)``.

    Lazy per class, so a fleet pays only for the classes its pools name.
    """

    def __init__(
        self,
        deployment: Deployment,
        classes: Mapping[str, InferenceClass],
        matcher: DeviceMatcher | None = None,
    ) -> None:
        self._members: tuple[Member, ...] = tuple(m for _, m in deployment.members())
        self._classes = classes
        self._matcher = matcher
        self._selector_memo: dict[tuple[str, str, str], tuple[bool, str | None]] = {}
        self._by_class: dict[str, tuple[MemberFit | Misfit, ...] | None] = {}
        self._masks: dict[str, int] = {}
        self.evaluations = 0
        # Other per-deployment results keyed by plain values (plan.py keeps
        # pod groups per (pools, demands) here): a thousand clusters share a
        # handful of shapes.
        self.memo: dict[tuple, object] = {}
        # Trial placements by (pool fill key, groups) (capacity.trial): a
        # thousand clusters hold a few dozen distinct pool fills.
        self.trials: dict[tuple, tuple[int, int] | None] = {}
        # Per interned pool (signature.PoolSig) a cluster tracks: its fill
        # after the other deployments' allocations, shared read-only by the
        # clusters with that pool (plan.quick_state). Keyed by identity: no
        # nested tuple is hashed.
        self.pools: dict[object, object] = {}
        # Per signature.PoolNames: the indexes of the pools a cluster with
        # those names tracks, their layout and its trials (plan.quick_state).
        self.layouts: dict[object, object] = {}
        # Whether a cluster with pools of these classes has a pool for
        # every member (filters.quick_pass).
        self.cover: dict[frozenset[str], bool] = {}
        self.pairs = deployment.members()
        self.everyone = (1 << len(self._members)) - 1

    def known(self, class_name: str) -> bool:
        return class_name in self._classes

    def fits(self, class_name: str) -> tuple[MemberFit | Misfit, ...] | None:
        """One entry per member, or None when the class is unknown."""
        if class_name not in self._by_class:
            cls = self._classes.get(class_name)
            self._by_class[class_name] = (
                None if cls is None else tuple(self._member_fit(cls, m) for m in self._members)
            )
        return self._by_class[class_name]

    def useful(self, class_name: str) -> bool:
        """Whether some member fits the class: only then is a pool of it worth tracking."""
        return self.mask(class_name) != 0

    def mask(self, class_name: str) -> int:
        """The members the class fits, as a bit set (bit i = member i), so a
        cluster's pools are checked against every member with a few ORs."""
        hit = self._masks.get(class_name)
        if hit is None:
            fits = self.fits(class_name) or ()
            hit = self._masks[class_name] = sum(1 << i for i, f in enumerate(fits) if isinstance(f, MemberFit))
        return hit

    def fit(self, class_name: str, member: int) -> MemberFit | Misfit | None:
        fits = self.fits(class_name)
        return None if fits is None else fits[member]

    def _member_fit(self, cls: InferenceClass, member: Member) -> MemberFit | Misfit:
        used: dict[str, int] = {}
        resolved: list[ResolvedDevice] = []
        for request in member.devices:
            detail = ""
            selector = ""
            chosen: ClassDevice | None = None
            for dev in cls.devices:
                ok, why, expr = self._selectors_hold(cls.name, dev, request.selectors)
                if not ok:
                    if not detail:
                        detail, selector = f"device {dev.name}: {why}", expr
                    continue
                left = dev.count - used.get(dev.name, 0) if dev.claim == DRA else dev.count
                if request.count > left:
                    # Selectors held, only the count is short: the most useful thing to say.
                    detail, selector = f"device {dev.name}: count {request.count} > {left} per node", ""
                    continue
                chosen = dev
                break
            if chosen is None:
                return Misfit(request.name, detail or "class has no devices", selector)
            if chosen.claim == DRA:
                used[chosen.name] = used.get(chosen.name, 0) + request.count
            resolved.append(
                ResolvedDevice(
                    request=request,
                    class_device=chosen.name,
                    count=request.count,
                    claim=chosen.claim,
                    device_class_name=chosen.device_class_name if chosen.claim == DRA else None,
                )
            )
        return MemberFit(devices=tuple(resolved), demand=tuple(sorted(used.items())))

    def _selectors_hold(
        self, class_name: str, dev: ClassDevice, selectors: tuple[str, ...]
    ) -> tuple[bool, str, str]:
        """(all hold, why not, the expression that did not)."""
        for i, expr in enumerate(selectors, start=1):
            ok, error = self._evaluate(class_name, dev, expr)
            if error:
                return False, f"selector {i} error: {_one_line(error)}", expr
            if not ok:
                return False, f"selector {i} false", expr
        return True, "", ""

    def _evaluate(self, class_name: str, dev: ClassDevice, expr: str) -> tuple[bool, str | None]:
        key = (expr, class_name, dev.name)
        hit = self._selector_memo.get(key)
        if hit is None:
            if self._matcher is None:
                self._matcher = default_matcher()
            result = self._matcher(expr, dev.device)
            self.evaluations += 1
            hit = (bool(result.matched), result.error)
            self._selector_memo[key] = hit
        return hit


def _one_line(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= _ERROR_CHARS else line[: _ERROR_CHARS - 1] + "…"
