"""What a real engine container would serve, read from its command line.

A pod runs its engine as ``command + args`` (or the image's entrypoint + ``args``
when it gives no command), after the kubelet has expanded ``$(NAME)``
references from the container's ``env``. This module does the same, finds the
engine invocation (directly, or inside a ``sh -c`` / ``bash -c`` script) and
reads the few flags that decide what the server answers: the model, the served
model names, the host and the port. Everything else (tensor parallelism,
parsers, ...) is ignored, because a mock has no weights.

Two engines are understood; anything else is a ``ConfigError`` naming the
container and what was expected, never a silent default:

- vLLM: ``vllm serve MODEL [--served-model-name N...] [--host H] [--port P]`` (``--model M``
  instead of MODEL is deprecated but accepted; both at once is refused, as vLLM's parser
  refuses it) and ``python3 -m vllm.entrypoints.openai.api_server --model M`` (that module
  never reads a positional model: it would serve vLLM's default model, so it is refused);
  port 8000. A container with ``args`` only and a vLLM image (``vllm/vllm-openai``,
  ``vllm/vllm-openai-rocm``, ``rocm/vllm``) runs that image's entrypoint:
  ``vllm serve`` from v0.14.0 and for a tag that names no release, the api_server module
  before (``modelplane.workloads.engines`` cites the sources). ``--headless`` (a
  multi-node worker) serves no HTTP. vLLM's argument parser accepts ``_`` for ``-`` in
  flag names; so does this one.
- SGLang: ``python3 -m sglang.launch_server --model-path M`` and ``sglang serve
  --model-path M`` (python/sglang/cli/serve.py in v0.5.x; ``--model`` is an
  alias), ``--served-model-name N`` (one name), ``--host`` (default 127.0.0.1),
  ``--port`` (default 30000). ``--node-rank`` above 0 serves no HTTP (only the
  first node runs the tokenizer and the HTTP server).
"""
from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modelplane import labels as L
from modelplane.errors import ModelplaneError
from modelplane.workloads import engines

VLLM = "vllm"
SGLANG = "sglang"
VLLM_MODULE = "vllm-module"   # found as python3 -m vllm.entrypoints.openai.api_server; serves as VLLM
ENGINE_CONTAINER = "engine"
DEFAULT_PORTS = {VLLM: 8000, SGLANG: 30000}
DEFAULT_HOSTS = {VLLM: "", SGLANG: "127.0.0.1"}   # "" = every interface (vLLM's --host default None)
VLLM_IMAGES = engines.VLLM_IMAGES
LOOPBACK = ("127.0.0.1", "localhost", "::1")
SHELLS = ("sh", "bash", "dash", "ash", "zsh")
VLLM_MODULES = ("vllm.entrypoints.openai.api_server",)
SGLANG_MODULES = ("sglang.launch_server",)
EXPECTED = ("expected `vllm serve MODEL`, `python3 -m vllm.entrypoints.openai.api_server --model M`, "
            "`python3 -m sglang.launch_server --model-path M`, `sglang serve --model-path M`, "
            "one of those inside `sh -c`, or only args with a vLLM image (" + ", ".join(VLLM_IMAGES) + ")")


class ConfigError(ModelplaneError, ValueError):
    """The container does not run an engine the mock understands (the CLI exits 2)."""


@dataclass(frozen=True)
class EngineConfig:
    """What the engine in one container serves."""

    engine: str                              # VLLM or SGLANG
    model: str                               # the model path or id the engine would load
    served_names: tuple[str, ...]            # the names requests may use; the first is the default
    port: int
    host: str = ""                           # "" = every interface
    serves_http: bool = True                 # False: a multi-node worker (vLLM --headless, SGLang rank > 0)
    argv: tuple[str, ...] = ()               # the engine invocation as found (after $(VAR) expansion)
    container: str = ""
    image: str = ""
    warnings: tuple[str, ...] = ()           # disagreements worth printing (a declared port that differs)


@dataclass(frozen=True)
class Identity:
    """Who answers: the pod's place in the fleet. Empty fields are unknown and left out."""

    cluster: str = ""
    namespace: str = ""
    pod: str = ""
    deployment: str = ""
    replica: str = ""
    revision: str = ""
    engine: str = ""                         # the ModelDeployment's engine name (label modelplane.ai/engine)

    HEADER_KEYS = ("cluster", "namespace", "pod", "deployment", "replica", "revision")

    def header(self) -> str:
        """``cluster=c,namespace=ns,pod=p,...`` in that order, unknown keys left out."""
        return ",".join(f"{k}={getattr(self, k)}" for k in self.HEADER_KEYS if getattr(self, k))


# --- the kubelet's $(VAR) expansion -------------------------------------------------------------

def expand(text: str, env: Mapping[str, str]) -> str:
    """Kubernetes' expansion of command, args and env values: ``$(NAME)`` becomes NAME's value
    when NAME is defined, and stays as written when it is not; ``$$`` is a literal ``$``."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c != "$" or i + 1 >= n:
            out.append(c)
            i += 1
        elif text[i + 1] == "$":
            out.append("$")
            i += 2
        elif text[i + 1] == "(":
            end = text.find(")", i + 2)
            if end < 0:
                out.append(text[i:])
                break
            name = text[i + 2:end]
            out.append(env[name] if name in env else text[i:end + 1])
            i = end + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def container_env(container: Mapping[str, Any]) -> dict[str, str]:
    """The container's literal env values, each expanded against the ones before it (as the
    kubelet does). ``valueFrom`` entries are only known at run time: left undefined."""
    env: dict[str, str] = {}
    for e in container.get("env") or []:
        if isinstance(e, Mapping) and isinstance(e.get("name"), str) and "value" in e:
            env[e["name"]] = expand(str(e.get("value") or ""), env)
    return env


# --- finding the engine invocation --------------------------------------------------------------

def _script_commands(script: str) -> list[list[str]]:
    """Each simple command of a shell script as words (continuations joined, comments dropped,
    split at ``;``, ``&&``, ``||``, ``|``, ``&``)."""
    commands: list[list[str]] = []
    for line in script.replace("\\\n", " ").splitlines():
        lex = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lex.commenters = ""     # bash starts a comment only at a word's start; handled below
        lex.whitespace_split = True
        try:
            words = list(lex)
        except ValueError as err:   # an unclosed quote
            raise ConfigError(f"cannot read the shell script line {line!r}: {err}") from None
        current: list[str] = []
        for w in words:
            if w.startswith("#"):
                break
            if w and set(w) <= set(";&|"):
                commands.append(current)
                current = []
            else:
                current.append(w)
        commands.append(current)
    return [c for c in commands if c]


def _strip_prefix(words: Sequence[str]) -> list[str]:
    """Drop what precedes the program: ``exec``, ``env``, ``nohup`` and ``NAME=value`` words."""
    out = list(words)
    while out and (out[0] in ("exec", "env", "nohup") or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", out[0])):
        out.pop(0)
    return out


def _engine_of(words: Sequence[str]) -> tuple[str, list[str]] | None:
    """(engine, its flags) when ``words`` invoke an engine, else None."""
    words = _strip_prefix(words)
    if not words:
        return None
    prog = os.path.basename(words[0])
    if prog == "vllm" and len(words) > 1 and words[1] == "serve":
        return VLLM, list(words[2:])
    if prog == "sglang" and len(words) > 1 and words[1] == "serve":
        return SGLANG, list(words[2:])
    if re.fullmatch(r"python(\d+(\.\d+)?)?", prog):
        rest = list(words[1:])
        while rest and rest[0].startswith("-") and rest[0] != "-m":
            rest.pop(0)     # interpreter options such as -u
        if len(rest) >= 2 and rest[0] == "-m":
            if rest[1] in VLLM_MODULES:
                return VLLM_MODULE, rest[2:]
            if rest[1] in SGLANG_MODULES:
                return SGLANG, rest[2:]
    return None


def _shell_script(argv: Sequence[str]) -> str | None:
    """The script of ``sh -c SCRIPT`` (also ``bash -ec``, ``-lc``...), else None."""
    if not argv or os.path.basename(argv[0]) not in SHELLS:
        return None
    for i, word in enumerate(argv[1:], start=1):
        if re.fullmatch(r"-[a-z]*c[a-z]*", word):
            return argv[i + 1] if i + 1 < len(argv) else None
        if not word.startswith("-"):
            return None
    return None


_SHELL_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def expand_shell(script: str, env: Mapping[str, str]) -> str:
    """The shell's ``$NAME``, ``${NAME}`` and ``${NAME:-default}`` from the container's env (the
    shell's environment); a name not in it keeps its default, or stays as written. Quoting is not
    honoured: a ``'$NAME'`` is expanded too."""
    def value(m: re.Match) -> str:
        name = m.group(1) or m.group(3)
        if name in env:
            return env[name]
        return m.group(2) if m.group(2) is not None else m.group(0)
    return _SHELL_VAR.sub(value, script)


def find_invocation(argv: Sequence[str], env: Mapping[str, str] | None = None) -> tuple[str, list[str]] | None:
    """(engine, flags) of the engine ``argv`` runs, directly or in a shell script (whose
    ``$NAME`` variables are read from ``env``); engine is VLLM, VLLM_MODULE (vLLM's
    api_server module, which reads no positional model) or SGLANG."""
    script = _shell_script(argv)
    if script is None:
        return _engine_of(argv)
    for words in _script_commands(expand_shell(script, env or {})):
        found = _engine_of(words)
        if found:
            return found
    return None


# --- reading the flags -------------------------------------------------------------------------

def _flags(words: Sequence[str], wanted: Mapping[str, str]) -> tuple[dict[str, list[str]], list[str]]:
    """Values of the ``wanted`` flags (canonical name -> "one" | "many" | "bool"), in either
    ``--flag=value`` or ``--flag value`` form, and the positionals.

    The mock cannot know every engine's boolean flags, so a bare word right after an unknown
    ``--flag`` (without ``=``) is taken as that flag's value, never as a positional; engines'
    own documentation puts the positional first (``vllm serve MODEL --flags``)."""
    found: dict[str, list[str]] = {}
    positionals: list[str] = []
    i, after_unknown = 0, False
    while i < len(words):
        word = words[i]
        i += 1
        if not word.startswith("-") or word == "-":
            if not after_unknown:
                positionals.append(word)
            after_unknown = False
            continue
        name, eq, value = word.lstrip("-").partition("=")
        name = name.replace("_", "-")
        kind = wanted.get(name) if word.startswith("--") else None
        after_unknown = kind is None and not eq
        if kind is None:
            continue
        if kind == "bool":
            found[name] = [value or "true"]
        elif eq:
            found[name] = [value]
        elif kind == "one":
            if i < len(words):
                found[name] = [words[i]]
                i += 1
        else:   # many: every following word up to the next flag
            values = []
            while i < len(words) and not words[i].startswith("-"):
                values.append(words[i])
                i += 1
            found[name] = values
    return found, positionals


def _port(text: str, where: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise ConfigError(f"{where}: --port {text!r} is not a number") from None
    if not 0 < port < 65536:
        raise ConfigError(f"{where}: --port {port} is out of range")
    return port


def _vllm(flags: Sequence[str], where: str, module: bool = False) -> dict[str, Any]:
    f, positionals = _flags(flags, {"model": "one", "served-model-name": "many", "host": "one",
                                    "port": "one", "headless": "bool"})
    flag_model = (f.get("model") or [""])[0]
    if module and positionals and not flag_model:
        raise ConfigError(f"{where}: the api_server module ignores the positional model {positionals[0]!r} "
                          "(vLLM would serve its default model); give --model, or run `vllm serve MODEL`")
    if not module and positionals and flag_model:
        raise ConfigError(f"{where}: vllm serve names the model twice ({positionals[0]!r} and --model "
                          f"{flag_model!r}); vLLM refuses that: keep the positional one")
    model = flag_model if module else (positionals[0] if positionals else flag_model)
    if not model:
        raise ConfigError(f"{where}: vllm serve names no model (a positional MODEL or --model)")
    names = tuple(f.get("served-model-name") or ()) or (model,)
    headless = (f.get("headless") or ["false"])[0].lower() not in ("false", "0")
    return {"engine": VLLM, "model": model, "served_names": names,
            "host": (f.get("host") or [DEFAULT_HOSTS[VLLM]])[0],
            "port": _port(f["port"][0], where) if f.get("port") else DEFAULT_PORTS[VLLM],
            "serves_http": not headless}


def _sglang(flags: Sequence[str], where: str) -> dict[str, Any]:
    f, _ = _flags(flags, {"model-path": "one", "model": "one", "served-model-name": "one", "host": "one",
                          "port": "one", "node-rank": "one"})
    model = (f.get("model-path") or f.get("model") or [""])[0]
    if not model:
        raise ConfigError(f"{where}: the SGLang server names no model (--model-path)")
    rank = (f.get("node-rank") or ["0"])[0]
    return {"engine": SGLANG, "model": model, "served_names": tuple((f.get("served-model-name") or [model])[:1]),
            "host": (f.get("host") or [DEFAULT_HOSTS[SGLANG]])[0],
            "port": _port(f["port"][0], where) if f.get("port") else DEFAULT_PORTS[SGLANG],
            "serves_http": rank.strip() in ("0", "")}


def is_vllm_image(image: str) -> bool:
    return engines.is_vllm_image(image)


def from_argv(argv: Sequence[str], image: str = "", env: Mapping[str, str] | None = None, *,
              container: str = "", args_only: bool = False) -> EngineConfig:
    """The engine ``argv`` (a pod's command + args) runs.

    With ``args_only`` (the container gave no command), ``argv`` are arguments to the image's
    entrypoint: a vLLM image's (by its version), an error for any other image."""
    where = f"container {container!r}" if container else "the command line"
    env = env or {}
    words = [expand(str(a), env) for a in argv]
    if args_only:
        entrypoint = engines.vllm_entrypoint(image)
        if entrypoint is None:
            raise ConfigError(f"{where}: no command, and image {image or '(none)'!r} has no entrypoint the mock "
                              f"knows; {EXPECTED}")
        words = [*entrypoint, *words]
    try:
        found = find_invocation(words, env)
    except ConfigError as err:
        raise ConfigError(f"{where}: {err}") from None
    if found is None:
        shown = shlex.join(words) if words else "(nothing)"
        raise ConfigError(f"{where} runs no engine the mock understands: {shown[:300]}; {EXPECTED}")
    engine, flags = found
    parsed = _sglang(flags, where) if engine == SGLANG else _vllm(flags, where, module=engine == VLLM_MODULE)
    warnings = ()
    if parsed["serves_http"] and parsed["host"] in LOOPBACK:
        warnings = ((f"{where}: the engine listens on {parsed['host']} only (its --host): nothing outside "
                     "the pod reaches it"),)
    return EngineConfig(**parsed, argv=tuple(words), container=container, image=image, warnings=warnings)


def container_of(pod: Mapping[str, Any], name: str | None = None) -> Mapping[str, Any]:
    """The container named ``name``; without a name the one named ``engine``, else the first."""
    containers = [c for c in ((pod.get("spec") or {}).get("containers") or []) if isinstance(c, Mapping)]
    pod_name = (pod.get("metadata") or {}).get("name") or "(unnamed)"
    if not containers:
        raise ConfigError(f"pod {pod_name!r} has no containers")
    wanted = name or ENGINE_CONTAINER
    for c in containers:
        if c.get("name") == wanted:
            return c
    if name:
        have = ", ".join(repr(c.get("name")) for c in containers)
        raise ConfigError(f"pod {pod_name!r} has no container {name!r} (it has {have})")
    return containers[0]


def from_pod(pod: Mapping[str, Any], container: str | None = None) -> EngineConfig:
    """The engine a pod's container runs (``container``, default ``engine``, else the first)."""
    c = container_of(pod, container)
    name, image = str(c.get("name") or ""), str(c.get("image") or "")
    env = container_env(c)
    command, args = list(c.get("command") or []), list(c.get("args") or [])
    config = from_argv(command + args if command else args, image, env, container=name, args_only=not command)
    declared = [int(p["containerPort"]) for p in c.get("ports") or []
                if isinstance(p, Mapping) and str(p.get("containerPort", "")).isdigit()]
    warnings = config.warnings
    if config.serves_http and declared and config.port not in declared:
        warnings += ((f"container {name!r} declares port(s) {', '.join(map(str, declared))} but the engine "
                     f"listens on {config.port}: serving on {config.port}, as the engine would"),)
    return EngineConfig(**{**config.__dict__, "warnings": warnings})


def identity_from_pod(pod: Mapping[str, Any], cluster: str = "") -> Identity:
    """Who answers, from the pod's name, namespace and Modelplane labels."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    return Identity(cluster=cluster, namespace=str(meta.get("namespace") or ""), pod=str(meta.get("name") or ""),
                    deployment=str(labels.get(L.DEPLOYMENT, "")), replica=str(labels.get(L.REPLICA, "")),
                    revision=str(labels.get(L.REVISION, "")), engine=str(labels.get(L.ENGINE, "")))


__all__ = ["ConfigError", "EngineConfig", "Identity", "container_env", "container_of", "expand",
           "find_invocation", "from_argv", "from_pod", "identity_from_pod", "is_vllm_image"]
