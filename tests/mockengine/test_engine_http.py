"""The mock engine over real HTTP on 127.0.0.1, in-process (modelplane.mockengine.server)."""
from __future__ import annotations

import json
import select
import socket
import threading
import time

import pytest
from modelplane.mockengine import Identity, Options, from_argv, start

from tests.mockengine.client import HEADER, call, chat, connect, events, metric

WHO = Identity(cluster="prod-a", namespace="ml-team", pod="qwen-0", deployment="qwen", replica="0", revision="r1",
               engine="qwen3-8b")
HEADER_VALUE = "cluster=prod-a,namespace=ml-team,pod=qwen-0,deployment=qwen,replica=0,revision=r1"
VLLM = from_argv(["vllm", "serve", "Qwen/Qwen3-8B", "--served-model-name", "x"])
SGLANG = from_argv(["python3", "-m", "sglang.launch_server", "--model-path", "M", "--served-model-name", "x"])


@pytest.fixture
def engine():
    with start(VLLM, WHO, "127.0.0.1", 0, Options(read_timeout=2.0)) as e:
        yield e


def test_chat_answers_with_the_model_and_the_pod(engine):
    r = call(connect(engine.port), "POST", "/v1/chat/completions", chat())
    body = r.json()
    assert r.status == 200
    assert body["model"] == "x"
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "mock answer from qwen-0 (x)"}
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"] == {"prompt_tokens": 2, "completion_tokens": 5, "total_tokens": 7}
    assert body["modelplane"] == {"cluster": "prod-a", "namespace": "ml-team", "pod": "qwen-0", "deployment": "qwen",
                                  "replica": "0", "revision": "r1", "engine": "qwen3-8b", "server": "vllm",
                                  "path": "/v1/chat/completions"}
    assert r.answered_by == HEADER_VALUE


def test_completion_stops_at_max_tokens(engine):
    r = call(connect(engine.port), "POST", "/v1/completions", {"model": "x", "prompt": "a b c", "max_tokens": 2})
    choice = r.json()["choices"][0]
    assert (r.status, choice["text"], choice["finish_reason"]) == (200, "mock answer", "length")
    assert r.json()["usage"]["completion_tokens"] == 2


def test_a_missing_model_means_the_first_served_name(engine):
    body = chat()
    del body["model"]
    assert call(connect(engine.port), "POST", "/v1/chat/completions", body).json()["model"] == "x"


def test_chat_streams_server_sent_events(engine):
    r = call(connect(engine.port), "POST", "/v1/chat/completions",
             chat(stream=True, stream_options={"include_usage": True}))
    got = events(r.body)
    assert r.status == 200 and r.headers["content-type"].startswith("text/event-stream")
    assert got[-1] == "[DONE]" and r.body.endswith(b"data: [DONE]\n\n")
    chunks = got[:-1]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text == "mock answer from qwen-0 (x)"
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 5
    assert all(c["object"] == "chat.completion.chunk" and c["modelplane"]["pod"] == "qwen-0" for c in chunks)


def test_completion_streams_too(engine):
    r = call(connect(engine.port), "POST", "/v1/completions", {"model": "x", "prompt": "hi", "stream": True})
    chunks = events(r.body)[:-1]
    assert "".join(c["choices"][0]["text"] for c in chunks) == "mock answer from qwen-0 (x)"
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert all(c["modelplane"]["path"] == "/v1/completions" for c in chunks)


def test_models_lists_the_served_names(engine):
    body = call(connect(engine.port), "GET", "/v1/models").json()
    assert [(m["id"], m["root"], m["owned_by"]) for m in body["data"]] == [("x", "Qwen/Qwen3-8B", "vllm")]
    assert body["modelplane"]["path"] == "/v1/models"


@pytest.mark.parametrize("method,path,body,status,want", [
    ("POST", "/ml-team/qwen/v1/chat/completions", chat(), 404, {"detail": "Not Found"}),
    ("GET", "/v1/chat/completions", None, 405, {"detail": "Method Not Allowed"}),
    ("POST", "/v1/chat/completions", chat("qwen"), 404,
     {"error": {"message": "The model `qwen` does not exist.", "type": "NotFoundError", "param": "model", "code": 404}}),
    ("POST", "/v1/chat/completions", {"model": "x"}, 400,
     {"error": {"message": "messages is required: a non-empty list of {role, content}", "type": "BadRequestError",
                "param": "messages", "code": 400}}),
    ("POST", "/v1/completions", {"model": "x", "prompt": "p", "max_tokens": 0}, 400,
     {"error": {"message": "max_tokens must be a positive integer, got 0", "type": "BadRequestError",
                "param": "max_tokens", "code": 400}}),
    ("POST", "/v1/chat/completions", chat(stream="yes"), 400,
     {"error": {"message": "stream must be a boolean, got 'yes'", "type": "BadRequestError", "param": "stream",
                "code": 400}}),
], ids=["a path the rewrite left", "wrong method", "unknown model", "missing messages", "bad max_tokens",
        "bad stream"])
def test_refusals(engine, method, path, body, status, want):
    r = call(connect(engine.port), method, path, body)
    assert (r.status, r.json()) == (status, want)
    assert r.answered_by == HEADER_VALUE


def test_bad_json_is_400_and_the_connection_lives_on(engine):
    conn = connect(engine.port)
    r = call(conn, "POST", "/v1/chat/completions", raw=b"{not json")
    assert r.status == 400 and "not valid JSON" in r.json()["error"]["message"]
    assert call(conn, "POST", "/v1/chat/completions", chat()).status == 200


def test_keep_alive_reuses_one_connection_even_after_a_404_with_a_body(engine):
    conn = connect(engine.port)
    assert call(conn, "POST", "/nowhere", chat()).status == 404
    sock = conn.sock
    for _ in range(3):
        assert call(conn, "POST", "/v1/chat/completions", chat()).status == 200
    assert conn.sock is sock, "the server closed a keep-alive connection"


def _raw(port: int, data: bytes, timeout: float = 5.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
        return out


def test_a_body_over_the_limit_is_refused_before_it_is_read(engine):
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2097152\r\n\r\n"
    reply = _raw(engine.port, head)   # no body sent: the server must answer from the header alone
    assert reply.startswith(b"HTTP/1.1 413 ")
    assert f"{HEADER}: {HEADER_VALUE}".encode() in reply
    assert b"Connection: close" in reply


def test_a_slow_client_blocks_no_one_and_gets_408():
    # The verdict is an order, not a duration: another client is answered while the slow one is
    # still waiting for its 408. The read timeout only has to outlast one call on a busy machine.
    with start(VLLM, WHO, "127.0.0.1", 0, Options(read_timeout=5.0)) as e:
        slow = socket.create_connection(("127.0.0.1", e.port), timeout=30)
        slow.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"mo")
        assert call(connect(e.port), "POST", "/v1/chat/completions", chat()).status == 200
        waiting, _, _ = select.select([slow], [], [], 0)
        assert waiting == [], "another client was answered while the slow one still waited"
        reply = _drain(slow)
    assert reply.startswith(b"HTTP/1.1 408 "), reply[:80]


def _drain(sock: socket.socket) -> bytes:
    reply = b""
    while chunk := sock.recv(65536):
        reply += chunk
    sock.close()
    return reply


def test_health_waits_for_ready_after_and_flips():
    with start(VLLM, WHO, "127.0.0.1", 0, Options(ready_after=1.0)) as e:
        conn = connect(e.port)
        first = call(conn, "GET", "/health")
        assert (first.status, first.answered_by) == (503, HEADER_VALUE)
        deadline = time.monotonic() + 30   # waits for the flip; generous for a busy machine
        while call(conn, "GET", "/health").status != 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert call(conn, "GET", "/health").status == 200
        assert call(conn, "POST", "/mock/health", {"ready": False}).json() == {"ready": False}
        assert call(conn, "GET", "/health").status == 503
        assert call(conn, "POST", "/mock/health", {"ready": True}).status == 200
        assert call(conn, "GET", "/health").status == 200
        assert call(conn, "POST", "/mock/health", {"ready": "no"}).status == 400


def test_metrics_count_what_was_served(engine):
    conn = connect(engine.port)
    for _ in range(3):
        call(conn, "POST", "/v1/chat/completions", chat())
    call(conn, "POST", "/v1/completions", {"model": "x", "prompt": "p", "max_tokens": 1})
    call(conn, "POST", "/v1/chat/completions", chat("nope"))   # refused: not counted
    r = call(conn, "GET", "/metrics")
    text = r.body.decode()
    labels = '{model_name="x",engine="0"'
    assert r.status == 200 and r.answered_by == HEADER_VALUE
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert metric(text, f'vllm:request_success_total{labels},finished_reason="stop"}}') == 3
    assert metric(text, f'vllm:request_success_total{labels},finished_reason="length"}}') == 1
    assert metric(text, f"vllm:time_to_first_token_seconds_count{labels}}}") == 4
    assert metric(text, f"vllm:inter_token_latency_seconds_count{labels}}}") == 12   # 3 x 4 gaps
    assert metric(text, f"vllm:generation_tokens_total{labels}}}") == 16
    assert metric(text, f"vllm:num_requests_running{labels}}}") == 0
    for family in ("vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"):
        assert f"# TYPE {family} gauge" in text


def test_sglang_metrics_use_sglang_names():
    with start(SGLANG, WHO, "127.0.0.1", 0) as e:
        conn = connect(e.port)
        call(conn, "POST", "/v1/chat/completions", chat())
        text = call(conn, "GET", "/metrics").body.decode()
    assert metric(text, 'sglang:num_requests_total{model_name="x"}') == 1
    for family, kind in (("sglang:num_running_reqs", "gauge"), ("sglang:num_queue_reqs", "gauge"),
                         ("sglang:token_usage", "gauge"), ("sglang:time_to_first_token_seconds", "histogram"),
                         ("sglang:inter_token_latency_seconds", "histogram")):
        assert f"# TYPE {family} {kind}" in text
    assert "vllm:" not in text


def test_max_running_makes_the_rest_wait():
    # Each request holds the one running slot for 1.5 s: long enough that all three have arrived
    # (one running, two waiting) before the first ends, however busy the machine.
    with start(VLLM, WHO, "127.0.0.1", 0, Options(service_time=1.5, max_running=1)) as e:
        results: list[int] = []

        def one():
            results.append(call(connect(e.port), "POST", "/v1/chat/completions", chat(stream=True)).status)

        threads = [threading.Thread(target=one) for _ in range(3)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        labels = '{model_name="x",engine="0"}'
        seen = set()
        while any(t.is_alive() for t in threads):
            text = call(connect(e.port), "GET", "/metrics").body.decode()
            seen.add((metric(text, f"vllm:num_requests_running{labels}"),
                      metric(text, f"vllm:num_requests_waiting{labels}")))
            time.sleep(0.05)
        elapsed = time.monotonic() - t0
    assert (1, 2) in seen, f"one running, two waiting at some point; saw {sorted(seen)}"
    assert max(running for running, _ in seen) == 1
    assert results == [200, 200, 200]
    assert elapsed >= 4.4, "three requests of 1.5 s, one at a time (two at once would take 3 s)"


def _timed_stream(port: int, headers: dict[str, str]) -> tuple[int, list, float]:
    conn = connect(port, timeout=30)
    t0 = time.monotonic()
    conn.request("POST", "/v1/chat/completions", body=json.dumps(chat(stream=True)),
                 headers={"Content-Type": "application/json", **headers})
    r = conn.getresponse()
    body = r.read()
    return r.status, events(body) if r.status == 200 else [json.loads(body)], time.monotonic() - t0


def test_a_token_delay_paces_every_token_of_a_stream():
    # A lower bound only: a sleep is never shorter than asked, however busy the machine.
    with start(VLLM, WHO, "127.0.0.1", 0, Options(token_delay=0.2)) as e:
        status, got, elapsed = _timed_stream(e.port, {})
        assert status == 200 and got[-1] == "[DONE]"
        tokens = [c for c in got[:-1] if c["choices"] and c["choices"][0]["delta"].get("content")]
        assert len(tokens) == 5 and elapsed >= 5 * 0.2
        # A request's header sets its own pace: here longer than the engine's.
        status, got, elapsed = _timed_stream(e.port, {"X-Mock-Token-Delay": "0.4"})
        assert status == 200 and got[-1] == "[DONE]" and elapsed >= 5 * 0.4


@pytest.mark.parametrize("value", ["soon", "-1", "61", "nan", "inf"])
def test_a_bad_token_delay_header_is_refused_naming_it(engine, value):
    status, got, _ = _timed_stream(engine.port, {"X-Mock-Token-Delay": value})
    assert status == 400
    assert got[0]["error"]["param"] == "X-Mock-Token-Delay"
    assert got[0]["error"]["message"].startswith(f"header X-Mock-Token-Delay: {value!r} is not a number of seconds")


def test_every_response_says_who_answered(engine):
    conn = connect(engine.port)
    replies = [call(conn, "GET", p) for p in ("/health", "/metrics", "/v1/models", "/nowhere")]
    replies += [call(conn, "POST", "/v1/completions", {"prompt": "p"}), call(conn, "DELETE", "/v1/models")]
    assert [r.answered_by for r in replies] == [HEADER_VALUE] * len(replies)


def test_a_client_that_leaves_mid_stream_counts_as_abort():
    with start(VLLM, WHO, "127.0.0.1", 0, Options(service_time=1.0)) as e:
        conn = connect(e.port)
        conn.request("POST", "/v1/chat/completions", body=json.dumps(chat(stream=True)),
                     headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        assert r.status == 200 and r.fp.readline()   # the first chunk's size line: streaming has begun
        conn.sock.shutdown(socket.SHUT_RDWR)
        conn.close()
        deadline = time.monotonic() + 5
        aborted = 0.0
        while time.monotonic() < deadline and not aborted:
            text = call(connect(e.port), "GET", "/metrics").body.decode()
            aborted = metric(text, 'vllm:request_success_total{model_name="x",engine="0",finished_reason="abort"}')
            time.sleep(0.1)
    assert aborted == 1
    assert metric(text, 'vllm:num_requests_running{model_name="x",engine="0"}') == 0


def test_deep_json_is_a_bad_request_not_a_crash(engine):
    conn = connect(engine.port)
    r = call(conn, "POST", "/v1/chat/completions", raw=b"[" * 100000 + b"]" * 100000)
    assert r.status == 400
    assert call(conn, "GET", "/health").status == 200


def test_an_http_1_0_client_gets_the_stream_unchunked(engine):
    body = json.dumps(chat(stream=True)).encode()
    reply = _raw(engine.port, b"POST /v1/chat/completions HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    head, _, rest = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ") and b"Transfer-Encoding" not in head and b"Connection: close" in head
    assert events(rest)[-1] == "[DONE]"
