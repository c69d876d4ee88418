"""The Prometheus text of each engine (modelplane.mockengine.metrics)."""
from __future__ import annotations

from modelplane.mockengine.metrics import Metrics

from tests.mockengine.client import metric


def test_histograms_are_cumulative_with_count_and_sum():
    m = Metrics("vllm", "x")
    for seconds in (0.003, 0.03, 3.0):
        m.observe_ttft(seconds)
    text = m.render()
    base = 'vllm:time_to_first_token_seconds_bucket{model_name="x",engine="0",le='
    assert [metric(text, base + f'"{le}"}}') for le in ("0.001", "0.005", "0.04", "2.5", "5.0", "+Inf")] == \
        [0, 1, 2, 2, 3, 3]
    assert metric(text, 'vllm:time_to_first_token_seconds_count{model_name="x",engine="0"}') == 3
    assert abs(metric(text, 'vllm:time_to_first_token_seconds_sum{model_name="x",engine="0"}') - 3.033) < 1e-9


def test_counters_are_written_with_total_as_prometheus_client_does():
    m = Metrics("sglang", "x")
    m.finish("stop", 3, 5)
    m.finish("length", 1, 2)
    text = m.render()
    assert "# TYPE sglang:num_requests_total counter" in text
    assert metric(text, 'sglang:num_requests_total{model_name="x"}') == 2
    assert metric(text, 'sglang:generation_tokens_total{model_name="x"}') == 7


def test_load_and_usage():
    m = Metrics("vllm", "x", capacity=4)
    m.set_load(running=2, waiting=3)
    text = m.render()
    assert [metric(text, f'vllm:{n}{{model_name="x",engine="0"}}')
            for n in ("num_requests_running", "num_requests_waiting", "kv_cache_usage_perc")] == [2, 3, 0.5]


def test_label_values_are_escaped():
    text = Metrics("sglang", 'a"b\\c').render()
    assert 'sglang:token_usage{model_name="a\\"b\\\\c"} 0.0' in text
