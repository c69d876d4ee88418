"""What the mock engine's tests share: a tiny HTTP client, SSE parsing, a free port."""
from __future__ import annotations

import http.client
import json
import socket
from dataclasses import dataclass
from typing import Any

HEADER = "X-Modelplane-Answered-By"


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def answered_by(self) -> str | None:
        return self.headers.get(HEADER.lower())


def call(conn: http.client.HTTPConnection, method: str, path: str, body: Any = None,
         raw: bytes | None = None) -> Reply:
    """One request on ``conn`` (kept alive); ``body`` is sent as JSON, ``raw`` as is."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    headers = {"Content-Type": "application/json"} if data is not None else {}
    conn.request(method, path, body=data, headers=headers)
    r = conn.getresponse()
    return Reply(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())


def connect(port: int, timeout: float = 5.0) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)


def events(body: bytes) -> list[Any]:
    """The ``data:`` payloads of an SSE body, JSON-decoded, with ``[DONE]`` kept as the string."""
    out = []
    for block in body.decode().split("\n\n"):
        if block.startswith("data: "):
            payload = block[len("data: "):]
            out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


def chat(model: str = "x", stream: bool = False, **extra: Any) -> dict:
    return {"model": model, "messages": [{"role": "user", "content": "say hello"}], "stream": stream, **extra}


def metric(text: str, sample: str) -> float:
    """The value of the sample line starting with ``sample`` (name and labels), or 0."""
    for line in text.splitlines():
        if line.startswith(sample + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
