"""The command line on the largest and most hostile files, as real processes: 30 s and 1 GiB each.

``make soak`` runs these (marked slow): each command is a fresh
``modelplane`` process, timed, its peak RSS read from the kernel when it
exits (``os.wait4``). A 50 MB file and a 10,000-level nesting (go-yaml's
limit: what crossplane render and kubectl read) load, or fail with one line,
within the limits; a billion laughs and a 10,001-level nesting fail in a
second.
Hypothesis then throws broken YAML text at the three readers in-process:
anything but a ``yaml.YAMLError`` (which every command reports as one line)
is a bug.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli import hostile_yaml as H
from tests.reliability.common import SOAK

LIMIT_S = 30.0
LIMIT_MB = 1024.0


@dataclass
class Measured:
    code: int
    err: str
    wall_s: float
    peak_mb: float


def _run(argv: list[str], cwd: Path) -> Measured:
    started = time.perf_counter()
    with open(cwd / "stderr", "w+") as err:
        proc = subprocess.Popen([sys.executable, "-m", "modelplane.cli", *argv], cwd=cwd,
                                stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)  # its rusage: the peak RSS of this child alone
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read()
    return Measured(proc.returncode, text, time.perf_counter() - started, usage.ru_maxrss / 1024)


def big_configmap(path: Path, mb: int = 50) -> None:
    """A ConfigMap of ``mb`` MB: one data key per line."""
    line = "  k{:08d}: " + "x" * 80 + "\n"
    with open(path, "w") as f:
        f.write(H.CONFIGMAP.decode() + "data:\n")
        size, i = 0, 0
        while size < mb * 1024 * 1024:
            s = line.format(i)
            f.write(s)
            size, i = size + len(s), i + 1


FILES = {
    "50 MB": None,  # written by big_configmap
    "billion laughs": H.laughs(),
    "10,000 levels": H.CONFIGMAP + b"data:\n  x: " + b"[" * 9_998 + b"]" * 9_998 + b"\n",
    "10,001 levels": H.CONFIGMAP + b"data:\n  x: " + b"[" * 9_999 + b"]" * 9_999 + b"\n",
    "a million levels": H.CONFIGMAP + b"data:\n  x: " + b"[" * 1_000_000 + b"]" * 1_000_000 + b"\n",
}
# Valid YAML: validate fails the 50 MB ConfigMap for size and the deep one for its type, render
# both for their kind, simulate ignores a ConfigMap. The others are refused while reading.
READ = {"50 MB", "10,000 levels"}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FILES))
@pytest.mark.parametrize("command", ["validate", "render", "simulate"])
def test_each_command_answers_a_hostile_file_within_30s_and_1gib(tmp_path, command, name):
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    bad = fleet / "bad.yaml"
    if FILES[name] is None:
        big_configmap(bad)
    else:
        bad.write_bytes(FILES[name])
    (tmp_path / "functions.yaml").write_bytes(H.FUNCTIONS)
    from modelplane import paths
    argv = {"validate": ["validate", str(bad)],
            "render": ["render", str(bad), str(paths.APIS / "modelservices" / "composition.yaml"),
                       str(tmp_path / "functions.yaml")],
            "simulate": ["simulate", str(fleet)]}[command]
    m = _run(argv, tmp_path)
    print(f"{command} {name}: exit {m.code}, {m.wall_s:.1f}s, {m.peak_mb:.0f} MB")
    assert "Traceback" not in m.err and "internal error" not in m.err, m.err[-3000:]
    assert m.wall_s < LIMIT_S, f"{command} took {m.wall_s:.1f}s on {name}"
    assert m.peak_mb < LIMIT_MB, f"{command} peaked at {m.peak_mb:.0f} MB on {name}"
    if name not in READ:
        assert m.code in (1, 2) and len([ln for ln in m.err.splitlines() if "bad.yaml" in ln]) <= 1, m.err


# ----- generated broken YAML, in-process ---------------------------------------------
FRAGMENTS = st.sampled_from(["\t", "&a ", "*a", "*b", "<<: *a\n", "- ", ": ", "? ", "{", "}", "[", "]", "'", '"', "|",
                             ">", "!!binary ", "!!python/object ", "%YAML 1.1\n", "---\n", "...\n", "#", "\n", "  ",
                             "\\x00", "\x00", "\ufeff", "\u202e", "é", "key", "1e9", "0x1F", "~", "null", "yes",
                             "2026-01-01", "!!set ", "!!omap ", "=", "@", "`"])
TEXTS = st.one_of(
    st.lists(FRAGMENTS, max_size=40).map("".join),
    st.text(max_size=200),
    st.builds(lambda head, junk, tail: head + junk + tail, st.just(H.CONFIGMAP.decode()),
              st.lists(FRAGMENTS, max_size=20).map("".join), st.just("data:\n  x: y\n")),
)


@pytest.mark.slow
def test_generated_broken_yaml_is_a_yaml_error_or_data():
    from modelplane.render import reader
    from modelplane.validate import manifests

    @settings(settings.get_profile("reliability"), max_examples=5_000 if SOAK else 300)
    @given(text=TEXTS)
    def one(text):
        for load in (reader.load_all, reader.load_all_fast, reader.load_one, manifests.load_text):
            try:
                load(text)
            except yaml.YAMLError:
                pass
        for data in (text.encode("utf-8", "surrogatepass"), text.encode("utf-16", "surrogatepass")):
            try:
                manifests.load_text(reader.decode(data))
            except yaml.YAMLError:
                pass

    one()
