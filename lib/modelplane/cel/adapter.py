"""The one module that talks to the CEL engine (cel-python, module ``celpy``).

Everything engine-specific lives here, so the engine can be swapped:

- :func:`compile` parses an expression once per (library, expression) per
  process; the LRU cache keeps results *and* failures, behind one lock,
  because parsing is not known to be thread-safe.
- :meth:`Program.evaluate` runs the tree with cel-python's interpreter (its
  transpiled runner shares state between threads) on a fresh evaluator per
  call, converting plain Python values in and out.
- Errors become :class:`CELError` (one trimmed line); guard failures, an
  exhausted step or CPU budget and Python's RecursionError become
  :class:`CELRejected`. No engine exception escapes.

Semantics worth knowing:

- Comparing values of different types (``"a" == 1``) is an error
  ("no such overload"), not false. Kubernetes rejects such comparisons when
  it can see the types, so an error is the closer match for typed data.
- Quantities and versions are opaque: ``==`` compares values
  (``quantity("1Gi") == quantity("1024Mi")``), ``<`` is an error as in
  Kubernetes; use compareTo/isGreaterThan/isLessThan.
- Every evaluation gets its library's ``guards.Limits``: ``steps`` tree-node
  visits and ``cpu_ms`` of the evaluating thread's CPU time; more is
  rejected. The deadline reads this thread's CPU time less garbage
  collection, not the wall clock, so neither a busy process nor a collector
  pause rejects a legitimate selector. The step budget is what holds a
  selector to ~10 ms; the deadline (twice that) catches steps that are dear.
"""
from __future__ import annotations

import copy
import gc
import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import celpy
import lark
from celpy import celtypes
from celpy.evaluation import CELEvalError, Evaluator

from ..quantity import Quantity
from ..semver import Version
from . import guards
from .errors import CELError, CELRejected
from .library import LIBRARIES, DomainMap, LibraryError
from .stats import record

__all__ = ["CACHE_SIZE", "Program", "compile", "evaluate_rule"]

CACHE_SIZE = 2048
# The CPU clock is read once every 16 steps (when steps & 15 == 0): a read costs ~1 µs, a step ~10 µs.
_CLOCK_MASK = 15


# -- opaque values --------------------------------------------------------
class _Opaque:
    """A quantity or version inside the engine: equal by value, never ordered."""

    __slots__ = ("value",)
    kind = "opaque"

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            raise TypeError(f"no such overload: {self.kind} == {type(other).__name__}")
        return self.value == other.value

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"{self.kind}({str(self.value)!r})"


class _CelQuantity(_Opaque):
    __slots__ = ()
    kind = "quantity"


class _CelVersion(_Opaque):
    __slots__ = ()
    kind = "semver"


class _CelDomainMap(celtypes.MapType):
    """device.attributes / device.capacity: a domain the device does not publish is an empty map."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return celtypes.MapType({})


# -- conversion -----------------------------------------------------------
def to_cel(value: Any) -> Any:
    """Convert plain Python data (and Quantity/Version) to engine values."""
    if isinstance(value, (celtypes.BoolType, celtypes.IntType, celtypes.UintType, celtypes.DoubleType,
                          celtypes.StringType, celtypes.BytesType, _Opaque)):
        return value
    if value is None:
        return None
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.IntType(value)
    if isinstance(value, float):
        return celtypes.DoubleType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    if isinstance(value, bytes):
        return celtypes.BytesType(value)
    if isinstance(value, Quantity):
        return _CelQuantity(value)
    if isinstance(value, Version):
        return _CelVersion(value)
    if isinstance(value, DomainMap):
        return _CelDomainMap({to_cel(k): to_cel(v) for k, v in value.items()})
    if isinstance(value, Mapping):
        return celtypes.MapType({to_cel(k): to_cel(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return celtypes.ListType([to_cel(v) for v in value])
    raise CELError(f"cannot pass a {type(value).__name__} to CEL")


def from_cel(value: Any) -> Any:
    """Convert an engine result back to plain Python (bool, int, float, str, list, dict, ...)."""
    if isinstance(value, _Opaque):
        return value.value
    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, (celtypes.IntType, celtypes.UintType)):
        return int(value)
    if isinstance(value, celtypes.DoubleType):
        return float(value)
    if isinstance(value, celtypes.StringType):
        return str(value)
    if isinstance(value, celtypes.BytesType):
        return bytes(value)
    if isinstance(value, Mapping):
        return {from_cel(k): from_cel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_cel(v) for v in value]
    return value


def _unwrap(value: Any) -> Any:
    return value.value if isinstance(value, _Opaque) else value


def _bind(name: str, fn: Any) -> Any:
    """Wrap a library function: unwrap arguments, convert the result, turn LibraryError into a CEL error."""

    def call(*args: Any) -> Any:
        if any(isinstance(a, CELEvalError) for a in args):
            return next(a for a in args if isinstance(a, CELEvalError))
        try:
            return to_cel(fn(*(_unwrap(a) for a in args)))
        except LibraryError as err:
            return CELEvalError(str(err), LibraryError, None)
        except TypeError as err:  # wrong number of arguments
            return CELEvalError(f"no such overload: {name}(): {err}", TypeError, None)

    call.__name__ = name
    return call


_FUNCTIONS = {lib: {name: _bind(name, fn) for name, fn in fns.items()} for lib, fns in LIBRARIES.items()}


def _unequal_types(equal: bool) -> Any:
    """cel-go's runtime ``==``/``!=``: numbers compare by value, other values of different types are unequal."""
    base = celpy.evaluation.bool_eq if equal else celpy.evaluation.bool_ne

    def call(a: Any, b: Any) -> Any:
        if isinstance(a, CELEvalError) or isinstance(b, CELEvalError):
            return a if isinstance(a, CELEvalError) else b
        try:
            return base(a, b)
        except TypeError:
            numbers = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType)
            numeric = all(isinstance(v, numbers) and not isinstance(v, celtypes.BoolType) for v in (a, b))
            same = numeric and (float(a) == float(b) if celtypes.DoubleType in (type(a), type(b)) else int(a) == int(b))
            return celtypes.BoolType(same if equal else not same)

    call.__name__ = "_==_" if equal else "_!=_"
    return call


# x-kubernetes-validations run on cel-go, which compares a dyn value (an int-or-string field) with a
# value of another type as unequal, not as an error (a static mismatch never compiles into a CRD).
# DRA selectors keep the error: see "Semantics worth knowing" above.
_FUNCTIONS["kubernetes"].update({"_==_": _unequal_types(True), "_!=_": _unequal_types(False)})


# -- evaluation -----------------------------------------------------------
class _OverBudget(BaseException):
    """Raised through the engine when an evaluation runs out of steps (or, with ``cpu``, of time).

    A BaseException, so the engine's `except Exception` clauses cannot swallow or log it.
    """

    def __init__(self, cpu: bool = False) -> None:
        super().__init__()
        self.cpu = cpu


_collector = threading.local()


def _time_collections(phase: str, info: dict) -> None:
    # The collector runs in whichever thread happens to allocate: its pause is not the selector's work.
    if phase == "start":
        _collector.started = time.thread_time()
    elif getattr(_collector, "started", None) is not None:
        _collector.spent = getattr(_collector, "spent", 0.0) + time.thread_time() - _collector.started
        _collector.started = None


class _CollectionsTimed:
    """Collections are timed only while an evaluation runs (in any thread): a gc callback costs
    every collection a Python call and two clock reads, and allocation-heavy code that evaluates
    nothing (a function server converting a request) ran 1.6 times slower with it installed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0

    def __enter__(self) -> None:
        _collector.started = None   # a collection this thread saw begin outside a window is not counted
        with self._lock:
            self._running += 1
            if self._running == 1:
                gc.callbacks.append(_time_collections)

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._running -= 1
            if self._running == 0:
                gc.callbacks.remove(_time_collections)


_collections_timed = _CollectionsTimed()


def _cpu() -> float:
    """This thread's CPU time in seconds, less what garbage collection took."""
    return time.thread_time() - getattr(_collector, "spent", 0.0)


class _Budget:
    """Steps left and the CPU-time deadline of one evaluation, shared by its sub-evaluators."""

    __slots__ = ("deadline", "steps")

    def __init__(self, steps: int, limits: guards.Limits) -> None:
        self.steps = steps
        self.deadline = _cpu() + limits.cpu_ms / 1000


class _Metered(Evaluator):
    """The interpreter, counting tree-node visits against a shared :class:`_Budget`."""

    def __init__(self, ast: lark.Tree, activation: Any, budget: _Budget) -> None:
        super().__init__(ast, activation=activation)
        self._budget = budget

    def sub_evaluator(self, ast: lark.Tree) -> Evaluator:
        # Macro bodies run in sub-evaluators: they must draw on the same budget.
        return _Metered(ast, self.activation, self._budget)

    def _visit_tree(self, tree: lark.Tree) -> Any:
        # lark routes visit() and visit_children() through here: one step per tree node.
        budget = self._budget
        budget.steps -= 1
        if budget.steps < 0:
            raise _OverBudget
        # A step can be dear (a library call, a long string): the clock bounds what steps cannot.
        if not budget.steps & _CLOCK_MASK and _cpu() > budget.deadline:
            raise _OverBudget(cpu=True)
        return super()._visit_tree(tree)


_OPERATORS = {"relation_lt": "<", "relation_le": "<=", "relation_gt": ">", "relation_ge": ">=",
              "relation_eq": "==", "relation_ne": "!=", "relation_in": "in", "addition_add": "+",
              "addition_sub": "-", "multiplication_mul": "*", "multiplication_div": "/",
              "multiplication_mod": "%"}
_TYPE_NAMES = {"StringType": "string", "IntType": "int", "UintType": "uint", "DoubleType": "double",
               "BoolType": "bool", "BytesType": "bytes", "ListType": "list", "MapType": "map",
               "_CelDomainMap": "map", "_CelQuantity": "quantity", "_CelVersion": "semver", "NoneType": "null"}
_OVERLOAD = re.compile(r"found no matching overload for Token\('RULE', '(\w+)'\) applied to '\((.*)\)'")
_CLASS = re.compile(r"<class '(?:[\w.]+\.)?(\w+)'>")


def _overload(text: str) -> str:
    """Rephrase the engine's operator-overload error as 'no such overload: string == int'."""
    m = _OVERLOAD.search(text)
    if not m:
        return text
    types = [_TYPE_NAMES.get(t, t) for t in _CLASS.findall(m.group(2))]
    op = _OPERATORS.get(m.group(1), m.group(1))
    return f"no such overload: {f' {op} '.join(types)}" if len(types) == 2 else f"no such overload: {op}"


def _message(err: BaseException) -> str:
    if isinstance(err, CELEvalError):
        text = err.args[0] if err.args else "evaluation error"
        cause = err.args[2] if len(err.args) > 2 and err.args[2] else None
        # "no such overload" alone says little; the cause names the operand types.
        if text == "no such overload" and cause:
            text = f"{text}: {cause[0] if isinstance(cause, tuple) and cause else cause}"
        # The engine appends the whole activation to unknown-name errors: drop it.
        return _overload(str(text).split(" (in activation")[0])
    return f"{type(err).__name__}: {err}"


@dataclass(frozen=True)
class Program:
    """A compiled expression, ready to evaluate against many activations."""

    expr: str
    library: str
    _ast: Any = field(repr=False, compare=False)
    _runner: Any = field(repr=False, compare=False)
    steps: int = 0  # the evaluation step budget: the library's, less what parsing cost

    def evaluate(self, activation: Mapping[str, Any]) -> Any:
        """Evaluate with the given variables; returns a Python value or raises CELError."""
        context = {name: to_cel(value) for name, value in activation.items()}
        record("evaluations")
        limits = guards.LIMITS[self.library]
        try:
            with _collections_timed:
                evaluator = _Metered(self._ast, self._runner.new_activation(), _Budget(self.steps, limits))
                result = evaluator.evaluate(context)
        except _OverBudget as over:
            if over.cpu:
                raise CELRejected(f"{limits.noun} too expensive: evaluation took more than {limits.cpu_ms:g} ms "
                                  f"of CPU; {limits.fix}", transient=True) from None
            raise CELRejected(f"{limits.noun} too expensive: evaluation exceeded {self.steps:,} steps; "
                              f"{limits.fix}") from None
        except RecursionError:
            raise CELRejected(f"{limits.noun} nests too deeply to evaluate; {limits.fix}") from None
        except CELEvalError as err:
            raise CELError(_message(err)) from None
        except CELError:
            raise
        except Exception as err:  # noqa: BLE001 - the engine lets Python errors through (min() of mixed types)
            raise CELError(_message(err)) from None
        if isinstance(result, CELEvalError):
            raise CELError(_message(result))
        return from_cel(result)


_lock = threading.Lock()
_cache: OrderedDict[tuple[str, str], Program | CELError] = OrderedDict()
# celpy.Environment() sets the interpreter's recursion limit to 2,500, even down from a higher one:
# keep the higher (render and validate raise it to read documents 10,000 levels deep, render.deepstack).
_limit = sys.getrecursionlimit()
_environment = celpy.Environment()  # interpreted runner by default
sys.setrecursionlimit(max(_limit, sys.getrecursionlimit()))


def compile(expr: str, *, library: str = "dra") -> Program:
    """Compile ``expr`` for ``library`` ("dra" or "kubernetes"); cached per process.

    Raises CELRejected for guard failures, CELError for syntax errors (also cached,
    so a bad selector costs one parse however often it is asked for).
    """
    if library not in _FUNCTIONS:
        raise ValueError(f"unknown CEL library {library!r}; want one of {sorted(_FUNCTIONS)}")
    if not isinstance(expr, str):
        raise CELError(f"expression must be a string, got {type(expr).__name__}")
    key = (library, expr)
    with _lock:
        hit = _cache.get(key)
        if hit is None:
            hit = _compile(expr, library)
            _cache[key] = hit
            if len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
        else:
            _cache.move_to_end(key)
    if isinstance(hit, CELError):
        # A copy: raising the cached object itself would pin, through its __traceback__, the
        # frames (and so the whole request) of the last call that raised it, for as long as
        # the cache holds it (the soak measured 708 MB after 1,500 calls).
        raise copy.copy(hit)
    return hit


def _compile(expr: str, library: str) -> Program | CELError:
    record("compiles")
    try:
        limits = guards.LIMITS[library]
        tokens = guards.check(expr, limits)
        ast = _environment.compile(expr)
        runner = _environment.program(ast, functions=_FUNCTIONS[library])
    except CELError as err:
        return err
    except RecursionError:
        return CELRejected("expression nests too deeply to parse")
    except celpy.CELParseError as err:
        return CELError(f"syntax error: {err}")
    except Exception as err:  # noqa: BLE001 - lark raises its own error types for some inputs
        return CELError(f"syntax error: {type(err).__name__}: {err}")
    return Program(expr, library, ast, runner, limits.evaluation_steps(tokens))


def evaluate_rule(expr: str, self_value: Any, old_self: Any = None) -> tuple[bool, str | None]:
    """Evaluate an x-kubernetes-validations rule with ``self`` (and ``oldSelf`` when given).

    Returns (True, None) when the rule holds, (False, None) when it is false and
    (False, reason) when it cannot be evaluated or does not return a bool.
    """
    activation = {"self": self_value}
    if old_self is not None:
        activation["oldSelf"] = old_self
    try:
        result = compile(expr, library="kubernetes").evaluate(activation)
    except CELError as err:
        return False, err.message
    if not isinstance(result, bool):
        return False, f"rule returned {type(result).__name__}, want bool"
    return result, None
