"""OpenAI-compatible request checks and response bodies, shaped as vLLM writes them.

- Errors: ``{"error": {"message", "type", "param", "code"}}`` with ``code`` the
  HTTP status as a number: vLLM's ``ErrorResponse``/``ErrorInfo``
  (vllm/entrypoints/openai/protocol.py; serve/engine/protocol.py in later
  releases). An unknown model is 404 ``NotFoundError`` with the message
  "The model `NAME` does not exist." (``OpenAIServing._check_model``). A
  missing ``model`` is allowed and means the first served name, as in vLLM.
- Unknown paths and wrong methods answer as FastAPI does for vLLM:
  ``{"detail": "Not Found"}`` (404) and ``{"detail": "Method Not Allowed"}`` (405).
- Streams are server-sent events, ``data: {chunk}\\n\\n`` ending with
  ``data: [DONE]\\n\\n``; chat chunks open with the assistant role, the last
  chunk carries ``finish_reason``, and ``stream_options.include_usage`` adds a
  usage chunk with no choices.

Every completion body, chunk and model list also carries ``"modelplane"``: who
answered and the path as received, so a test behind a gateway can tell which
pod served it and how the path was rewritten.

The answer is deterministic: "mock answer from POD (MODEL)", one token per word,
cut at ``max_tokens`` (then ``finish_reason`` is ``length``).
"""
from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelplane import clock


class RequestError(ValueError):
    """A request the engine refuses: ``status``, a vLLM error ``type`` and the field at fault."""

    def __init__(self, status: int, err_type: str, message: str, param: str | None = None):
        super().__init__(message)
        self.status, self.err_type, self.message, self.param = status, err_type, message, param


def error_body(status: int, err_type: str, message: str, param: str | None = None) -> dict:
    return {"error": {"message": message, "type": err_type, "param": param, "code": status}}


def bad_request(message: str, param: str | None = None) -> RequestError:
    return RequestError(400, "BadRequestError", message, param)


@dataclass(frozen=True)
class Request:
    """A checked completion request."""

    kind: str                    # "chat" or "completion"
    model: str                   # the served name asked for (or the default one)
    prompt_tokens: int
    max_tokens: int | None
    stream: bool
    include_usage: bool


def _words(value: Any) -> int:
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):   # chat content parts, or a batch of prompts
        return sum(_words(v.get("text", "") if isinstance(v, Mapping) else v) for v in value)
    return 0


def _optional_int(body: Mapping[str, Any], *names: str) -> int | None:
    for name in names:
        value = body.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise bad_request(f"{name} must be a positive integer, got {value!r}", name)
        return value
    return None


def parse(kind: str, body: Any, served_names: tuple[str, ...]) -> Request:
    """Check a chat or completion request body (already JSON-decoded)."""
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object")
    model = body.get("model")
    if model is None:
        model = served_names[0]
    elif not isinstance(model, str):
        raise bad_request(f"model must be a string, got {model!r}", "model")
    elif model not in served_names:
        raise RequestError(404, "NotFoundError", f"The model `{model}` does not exist.", "model")
    if kind == "chat":
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise bad_request("messages is required: a non-empty list of {role, content}", "messages")
        for i, m in enumerate(messages):
            if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                raise bad_request(f"messages[{i}] needs a string role", f"messages[{i}].role")
        prompt_tokens = sum(_words(m.get("content")) for m in messages)
    else:
        prompt = body.get("prompt")
        if not isinstance(prompt, (str, list)) or (isinstance(prompt, list) and not prompt):
            raise bad_request("prompt is required: a string or a list of strings", "prompt")
        prompt_tokens = _words(prompt)
    stream = body.get("stream", False)
    if stream is None:
        stream = False
    if not isinstance(stream, bool):
        raise bad_request(f"stream must be a boolean, got {stream!r}", "stream")
    options = body.get("stream_options") or {}
    if not isinstance(options, dict):
        raise bad_request("stream_options must be an object", "stream_options")
    max_tokens = _optional_int(body, "max_completion_tokens", "max_tokens")
    return Request(kind, model, prompt_tokens, max_tokens, stream, bool(options.get("include_usage")))


def answer_tokens(pod: str, model: str, max_tokens: int | None) -> tuple[list[str], str]:
    """The answer's tokens (words, each but the first led by a space) and the finish reason."""
    words = f"mock answer from {pod or 'mock-engine'} ({model})".split()
    tokens = [w if i == 0 else " " + w for i, w in enumerate(words)]
    if max_tokens is not None and max_tokens < len(tokens):
        return tokens[:max_tokens], "length"
    return tokens, "stop"


def usage(prompt_tokens: int, completion_tokens: int) -> dict:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


class Response:
    """The bodies of one completion: whole, or as stream chunks."""

    def __init__(self, request: Request, who: dict, tokens: list[str], finish_reason: str):
        self.request, self.who = request, who
        self.tokens, self.finish_reason = tokens, finish_reason
        prefix = "chatcmpl-" if request.kind == "chat" else "cmpl-"
        self.id = prefix + uuid.uuid4().hex
        self.created = int(clock.now().timestamp())

    def _head(self, obj: str) -> dict:
        return {"id": self.id, "object": obj, "created": self.created, "model": self.request.model}

    def _usage(self, completion_tokens: int) -> dict:
        return usage(self.request.prompt_tokens, completion_tokens)

    def whole(self) -> dict:
        text = "".join(self.tokens)
        if self.request.kind == "chat":
            choice = {"index": 0, "message": {"role": "assistant", "content": text},
                      "logprobs": None, "finish_reason": self.finish_reason}
            body = self._head("chat.completion")
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": self.finish_reason}
            body = self._head("text_completion")
        return {**body, "choices": [choice], "usage": self._usage(len(self.tokens)), "modelplane": self.who}

    def _chunk(self, choice: dict | None) -> dict:
        obj = "chat.completion.chunk" if self.request.kind == "chat" else "text_completion"
        return {**self._head(obj), "choices": [choice] if choice else [], "modelplane": self.who}

    def opening(self) -> dict | None:
        """The chunk before the first token (chat: the assistant role), or None."""
        if self.request.kind != "chat":
            return None
        return self._chunk({"index": 0, "delta": {"role": "assistant", "content": ""},
                            "logprobs": None, "finish_reason": None})

    def token(self, i: int) -> dict:
        last = i == len(self.tokens) - 1
        reason = self.finish_reason if last and self.request.kind != "chat" else None
        if self.request.kind == "chat":
            return self._chunk({"index": 0, "delta": {"content": self.tokens[i]}, "logprobs": None,
                                "finish_reason": None})
        return self._chunk({"index": 0, "text": self.tokens[i], "logprobs": None, "finish_reason": reason})

    def closing(self) -> list[dict]:
        """The chunks after the last token: chat's finish chunk, then usage when asked for."""
        out = []
        if self.request.kind == "chat" or not self.tokens:
            out.append(self._chunk({"index": 0, **({"delta": {}} if self.request.kind == "chat" else {"text": ""}),
                                    "logprobs": None, "finish_reason": self.finish_reason}))
        if self.request.include_usage:
            out.append({**self._chunk(None), "usage": self._usage(len(self.tokens))})
        return out


def model_list(served_names: tuple[str, ...], model: str, owned_by: str, who: dict, created: int) -> dict:
    """``GET /v1/models``: one card per served name, ``root`` the model loaded (as vLLM lists them)."""
    cards = [{"id": name, "object": "model", "created": created, "owned_by": owned_by, "root": model,
              "parent": None} for name in served_names]
    return {"object": "list", "data": cards, "modelplane": who}
