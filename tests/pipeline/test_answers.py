"""pipeline.answers: an answer that holds whatever the time is given again for the same request, and only then."""
from __future__ import annotations

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane import functions
from modelplane.errors import InputError
from modelplane.pipeline.answers import Answers, composite_key
from modelplane.pipeline.composition import Composition
from modelplane.pipeline.server import FunctionRunner, decode_request, run_compose

from tests import support


def _xr(name: str = "d", **spec) -> dict:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelDeployment",
            "metadata": {"name": name, "namespace": "ns"}, "spec": spec}


def _wire(xr: dict, clusters: int = 3, **context: str) -> bytes:
    req = support.request(xr, required={"clusters": [{"metadata": {"name": f"c{i}"}} for i in range(clusters)]})
    req.context.update(context)
    return req.SerializeToString()


class Counting:
    """A compose that names its XR's spec.answer in a ConfigMap, cacheable unless spec.timed."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, c: Composition) -> None:
        self.calls += 1
        if c.spec.get("bad"):
            raise InputError("spec.bad", "remove it")
        c.desire("cm", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": c.name},
                        "data": {"answer": str(c.spec.get("answer")), "clusters": str(len(c.required("clusters")))}})
        if not c.spec.get("timed"):
            c.cacheable()


def _runner() -> tuple[FunctionRunner, Counting]:
    compose = Counting()
    return FunctionRunner("test-fn", compose, workers=1), compose


def _answer(rsp: fnv1.RunFunctionResponse | bytes) -> fnv1.RunFunctionResponse:
    return rsp if isinstance(rsp, fnv1.RunFunctionResponse) else fnv1.RunFunctionResponse.FromString(rsp)


def test_the_same_request_is_answered_again_without_composing():
    runner, compose = _runner()
    first = runner._run(decode_request(_wire(_xr(answer=1))))
    again = runner._run(decode_request(_wire(_xr(answer=1))))
    assert compose.calls == 1 and isinstance(again, bytes)
    assert _answer(again) == _answer(first)
    assert support.desired(_answer(again))["cm"]["data"] == {"answer": "1", "clusters": "3"}
    assert (runner.answers.hits, runner.answers.misses) == (1, 1)


def test_any_other_byte_composes_again():
    runner, compose = _runner()
    runner._run(decode_request(_wire(_xr(answer=1))))
    changed = [_wire(_xr(answer=2)), _wire(_xr(answer=2), clusters=4), _wire(_xr(answer=2), clusters=4, k="v")]
    got = [support.desired(_answer(runner._run(decode_request(w))))["cm"]["data"] for w in changed]
    assert compose.calls == 4
    assert got == [{"answer": "2", "clusters": "3"}, {"answer": "2", "clusters": "4"}, {"answer": "2", "clusters": "4"}]
    runner._run(decode_request(changed[-1]))
    assert compose.calls == 4                               # the last one, again: kept


def test_an_answer_that_depends_on_the_time_or_an_error_is_not_given_again():
    runner, compose = _runner()
    for spec in ({"timed": True}, {"bad": True}):
        for _ in range(2):
            rsp = _answer(runner._run(decode_request(_wire(_xr(**spec)))))
        assert (support.fatal(rsp) is not None) == ("bad" in spec)
    assert compose.calls == 4
    # an XR whose answer stops holding forgets the one it had: its old request composes again
    runner._run(decode_request(_wire(_xr(answer=1))))
    runner._run(decode_request(_wire(_xr(answer=1, timed=True))))
    runner._run(decode_request(_wire(_xr(answer=1))))
    assert compose.calls == 7


def test_one_answer_per_composite_resource_within_a_byte_budget(monkeypatch):
    kept = Answers(limit_bytes=10_000)
    runner, _ = _runner()
    runner.answers = kept
    for name in ("a", "b", "c"):
        for answer in range(3):   # each XR's newer request replaces its older answer
            runner._run(decode_request(_wire(_xr(name, answer=answer))))
    assert len(kept._by_xr) == 3 and kept._bytes == sum(len(w) for _, w in kept._by_xr.values())
    small = Answers(limit_bytes=2 * kept._bytes // 3)
    runner.answers = small
    for name in ("a", "b", "c"):
        runner._run(decode_request(_wire(_xr(name, answer=9))))
    assert [k[3] for k in small._by_xr] == ["b", "c"]          # least recently used out first
    assert small._bytes <= small._limit


def test_a_request_that_is_not_received_from_wire_bytes_is_composed_every_time():
    runner, compose = _runner()
    req = fnv1.RunFunctionRequest.FromString(_wire(_xr(answer=1)))
    assert all(isinstance(runner._run(req), fnv1.RunFunctionResponse) for _ in range(2))
    assert compose.calls == 2


def test_the_composite_key_reads_what_is_there_and_inserts_nothing():
    req = fnv1.RunFunctionRequest.FromString(_wire(_xr("d")))
    assert composite_key(req) == ("modelplane.ai/v1alpha1", "ModelDeployment", "ns", "d")
    empty = fnv1.RunFunctionRequest()
    assert composite_key(empty) == ("", "", "", "")
    assert not empty.observed.composite.resource.fields       # looking did not add "metadata"
    odd = fnv1.RunFunctionRequest()
    odd.observed.composite.resource.update({"metadata": "not a map", "kind": 3})
    assert composite_key(odd) == ("", "", "", "")


def test_a_served_function_gives_the_same_bytes_again_and_composes_when_they_change():
    """Over real gRPC: compose-model-deployment's steady answer, asked twice, then another request of that XR."""
    import grpc

    from tests.bench.requests import deployment_part, replicas, required_part
    shared = required_part(20, simulated=True)
    with support.serve_popen("compose-model-deployment", "--insecure") as (_, address), \
            grpc.insecure_channel(address) as channel:
        rpc = channel.unary_unary("/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction")
        placed = fnv1.RunFunctionResponse.FromString(rpc(deployment_part() + shared, timeout=30))
        steady = deployment_part(replicas(placed, 10)) + shared
        first, again = rpc(steady, timeout=30), rpc(steady, timeout=30)
        assert first == again
        # the same XR, another request (a clock in the context): composed for it, not the kept answer
        later = fnv1.RunFunctionRequest.FromString(steady)
        later.context.update({"modelplane.ai/now": "2030-01-01T00:00:00Z"})
        answer = rpc(later.SerializeToString(), timeout=30)
        fn = "compose-model-deployment"
        assert answer != first
        # (equal as messages: two processes may serialise a map's entries in another order)
        mine = run_compose(fn, functions.load(fn), decode_request(later.SerializeToString()))
        assert fnv1.RunFunctionResponse.FromString(answer) == mine
