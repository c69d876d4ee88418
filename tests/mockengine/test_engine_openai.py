"""Request checks and bodies (modelplane.mockengine.openai)."""
from __future__ import annotations

import pytest
from modelplane.mockengine import openai

NAMES = ("qwen", "qwen-alias")


@pytest.mark.parametrize("kind,body,want", [
    ("chat", {"model": "qwen-alias", "messages": [{"role": "user", "content": "a b"}]},
     openai.Request("chat", "qwen-alias", 2, None, False, False)),
    ("chat", {"messages": [{"role": "user", "content": [{"type": "text", "text": "a b c"}]}], "stream": True,
              "stream_options": {"include_usage": True}, "max_completion_tokens": 3},
     openai.Request("chat", "qwen", 3, 3, True, True)),
    ("completion", {"model": "qwen", "prompt": ["a", "b c"], "max_tokens": 4, "stream": None},
     openai.Request("completion", "qwen", 3, 4, False, False)),
], ids=["an alias", "content parts, streaming, max_completion_tokens", "a batch of prompts"])
def test_parse(kind, body, want):
    assert openai.parse(kind, body, NAMES) == want


@pytest.mark.parametrize("kind,body,status,param", [
    ("chat", [], 400, None),
    ("chat", {"model": 7, "messages": []}, 400, "model"),
    ("chat", {"model": "llama", "messages": [{"role": "user", "content": "x"}]}, 404, "model"),
    ("chat", {"messages": [{"content": "x"}]}, 400, "messages[0].role"),
    ("completion", {"prompt": []}, 400, "prompt"),
    ("completion", {"prompt": "x", "max_tokens": True}, 400, "max_tokens"),
    ("completion", {"prompt": "x", "stream_options": "yes"}, 400, "stream_options"),
], ids=["not an object", "model not a string", "unknown model", "a message without a role", "empty prompt",
        "max_tokens a boolean", "stream_options a string"])
def test_parse_refuses(kind, body, status, param):
    with pytest.raises(openai.RequestError) as err:
        openai.parse(kind, body, NAMES)
    assert (err.value.status, err.value.param) == (status, param)


def test_the_answer_is_deterministic_and_cut_at_max_tokens():
    assert openai.answer_tokens("p-0", "qwen", None) == (["mock", " answer", " from", " p-0", " (qwen)"], "stop")
    assert openai.answer_tokens("", "qwen", 2) == (["mock", " answer"], "length")
