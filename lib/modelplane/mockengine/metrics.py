"""The engine's Prometheus metrics, under the names the real engine uses.

Gateways and autoscalers read these (the inference extension's endpoint picker
reads the queue and the KV-cache gauges), so the names, types and the
``model_name`` label follow the engine the container runs. The values count
the requests this mock really serves.

Names verified in the engines' sources:

- vLLM, ``vllm/v1/metrics/loggers.py`` (``PrometheusStatLogger``): gauges
  ``vllm:num_requests_running``, ``vllm:num_requests_waiting``,
  ``vllm:kv_cache_usage_perc``; counters ``vllm:request_success`` (label
  ``finished_reason``), ``vllm:prompt_tokens``, ``vllm:generation_tokens``;
  histograms ``vllm:time_to_first_token_seconds``,
  ``vllm:inter_token_latency_seconds``. Labels ``model_name`` and ``engine``
  (the engine core's index, "0" with one core).
- SGLang, ``python/sglang/srt/metrics/collector.py`` (``SchedulerMetricsCollector``
  and ``TokenizerMetricsCollector``) and docs.sglang.io "Production Metrics":
  gauges ``sglang:num_running_reqs``, ``sglang:num_queue_reqs``,
  ``sglang:token_usage``; counters ``sglang:num_requests``,
  ``sglang:prompt_tokens``, ``sglang:generation_tokens``; histograms
  ``sglang:time_to_first_token_seconds``, ``sglang:inter_token_latency_seconds``.
  Label ``model_name``.

A counter named ``x`` is exposed as ``x_total``, as prometheus_client writes it.
``kv_cache_usage_perc`` / ``token_usage`` stand in for memory: the fraction of
``capacity`` requests running (a mock has no KV cache).
"""
from __future__ import annotations

import threading
from bisect import bisect_left
from dataclasses import dataclass

# Buckets as the engines declare them (vLLM's loggers.py; SGLang's collector uses its own).
TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
                10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
ITL_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
               20.0, 40.0, 80.0)
FINISH_REASONS = ("stop", "length", "abort")


@dataclass(frozen=True)
class Names:
    """One engine's metric names."""

    running: str
    waiting: str
    usage: str
    requests: str              # counter of finished requests
    prompt_tokens: str
    generation_tokens: str
    ttft: str
    itl: str
    by_finish_reason: bool     # vLLM labels finished requests with finished_reason
    engine_label: bool         # vLLM labels every series with engine="0"


NAMES = {
    "vllm": Names("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
                  "vllm:request_success", "vllm:prompt_tokens", "vllm:generation_tokens",
                  "vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds", True, True),
    "sglang": Names("sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:token_usage",
                    "sglang:num_requests", "sglang:prompt_tokens", "sglang:generation_tokens",
                    "sglang:time_to_first_token_seconds", "sglang:inter_token_latency_seconds", False, False),
}


class _Histogram:
    def __init__(self, buckets: tuple[float, ...]):
        self.buckets = buckets
        self.counts = [0] * len(buckets)
        self.total = 0
        self.sum = 0.0

    def observe(self, value: float) -> None:
        i = bisect_left(self.buckets, value)
        if i < len(self.counts):
            self.counts[i] += 1
        self.total += 1
        self.sum += value


def _pair(key: str, value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'{key}="{escaped}"'


def _number(value: float) -> str:
    return repr(float(value))


class Metrics:
    """Thread-safe counters of one engine; ``render()`` is the ``/metrics`` body."""

    def __init__(self, engine: str, model_name: str, capacity: int = 256):
        self.names = NAMES[engine]
        self.model_name = model_name
        self.capacity = max(1, capacity)
        self.running = 0
        self.waiting = 0
        self.finished = {r: 0 for r in FINISH_REASONS}
        self.prompt_tokens = 0
        self.generation_tokens = 0
        self.ttft = _Histogram(TTFT_BUCKETS)
        self.itl = _Histogram(ITL_BUCKETS)
        self._lock = threading.Lock()

    def observe_ttft(self, seconds: float) -> None:
        with self._lock:
            self.ttft.observe(seconds)

    def observe_itl(self, seconds: float) -> None:
        with self._lock:
            self.itl.observe(seconds)

    def finish(self, reason: str, prompt_tokens: int, generation_tokens: int) -> None:
        with self._lock:
            self.finished[reason] = self.finished.get(reason, 0) + 1
            self.prompt_tokens += prompt_tokens
            self.generation_tokens += generation_tokens

    def set_load(self, running: int, waiting: int) -> None:
        with self._lock:
            self.running, self.waiting = running, waiting

    def _labels(self, extra: str = "") -> str:
        parts = [_pair("model_name", self.model_name)] + ([_pair("engine", "0")] if self.names.engine_label else [])
        return "{" + ",".join(parts + ([extra] if extra else [])) + "}"

    def render(self) -> str:
        n = self.names
        with self._lock:
            lines: list[str] = []

            def family(name: str, kind: str, doc: str) -> None:
                lines.extend([f"# HELP {name} {doc}", f"# TYPE {name} {kind}"])

            family(n.running, "gauge", "Number of requests running.")
            lines.append(f"{n.running}{self._labels()} {_number(self.running)}")
            family(n.waiting, "gauge", "Number of requests waiting to be processed.")
            lines.append(f"{n.waiting}{self._labels()} {_number(self.waiting)}")
            family(n.usage, "gauge", "KV-cache usage. 1 means 100 percent usage.")
            lines.append(f"{n.usage}{self._labels()} {_number(min(1.0, self.running / self.capacity))}")
            name = n.requests + "_total"
            family(name, "counter", "Count of finished requests.")
            if n.by_finish_reason:
                lines += [f"{name}{self._labels(_pair('finished_reason', r))} {_number(c)}"
                          for r, c in sorted(self.finished.items())]
            else:
                lines.append(f"{name}{self._labels()} {_number(sum(self.finished.values()))}")
            for counter, value, doc in ((n.prompt_tokens, self.prompt_tokens, "Number of prefill tokens processed."),
                                        (n.generation_tokens, self.generation_tokens,
                                         "Number of generation tokens processed.")):
                family(counter + "_total", "counter", doc)
                lines.append(f"{counter}_total{self._labels()} {_number(value)}")
            for hist_name, hist, doc in ((n.ttft, self.ttft, "Histogram of time to first token in seconds."),
                                         (n.itl, self.itl, "Histogram of inter-token latency in seconds.")):
                family(hist_name, "histogram", doc)
                cumulative = 0
                for le, count in zip(hist.buckets, hist.counts):
                    cumulative += count
                    lines.append(f"{hist_name}_bucket{self._labels(_pair('le', str(le)))} {_number(cumulative)}")
                lines.append(f"{hist_name}_bucket{self._labels(_pair('le', '+Inf'))} {_number(hist.total)}")
                lines.append(f"{hist_name}_count{self._labels()} {_number(hist.total)}")
                lines.append(f"{hist_name}_sum{self._labels()} {_number(hist.sum)}")
        return "\n".join(lines) + "\n"
