"""Engine images by version: what their entrypoint runs and how it takes a model path.

Modelplane writes one engine argument itself: when a member mounts a ModelCache
and gives only ``args`` (no ``command``, no model of its own), the model path.
Only the image's entrypoint reads those args, so the form follows the image and
its version. Facts, from vLLM's sources and tracker (checked 2026-11):

- ``vllm/vllm-openai`` ran ``python3 -m vllm.entrypoints.openai.api_server``
  up to v0.13.x and runs ``vllm serve`` from v0.14.0 (docker/Dockerfile, target
  ``vllm-openai``; vllm#32292 on v0.13, vllm#32755 and vllm#40872 on v0.14.0,
  vllm#37133 on v0.17.1). The api_server module parses a positional model but never reads it:
  it serves vLLM's default model instead, so an older image needs ``--model``.
- ``vllm serve`` takes the model positionally (``model_tag``, since the CLI
  came in v0.5.2, vllm#5090). ``--model`` with it was refused from v0.5.5 (vllm#7347), then
  accepted with a deprecation warning that moves it to the front
  (``FlexibleArgumentParser.parse_args`` in vllm/utils/argparse_utils.py: "will
  be removed in v0.13" by v0.11.1, "in a future version" since vllm#39518,
  still logged by v0.23.0 at argparse_utils.py:257).

So a vLLM image of a known version at or after ``VLLM_SERVE_SINCE`` gets the
path as its first argument (``vllm serve /mnt/models ...``, the documented form;
it must be first: ``--served-model-name`` takes every word after it). Anything
else gets ``--model=PATH`` appended, as before: older images need it, and it is
the one form every vLLM entrypoint accepts, so it is also the default when the
version is unknown (``latest``, ``nightly``, a bare digest, a tag that is not
``[v]MAJOR.MINOR.PATCH[-suffix]``) or the image is not a vLLM one. A suffix
(``v0.23.0-cu129``) is a build flavour, not a pre-release: only the numbers
count. With ``image:tag@digest`` the tag is read (the digest pins the bytes;
the tag says which release they are).

Changing the form changes the pod template, so a replica whose form changes
rolls once (docs/platform/upgrade.md says which).
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from modelplane.semver import Version

POSITIONAL = "positional"   # vllm serve PATH ...
FLAG = "flag"               # ... --model=PATH

VLLM_SERVE = ("vllm", "serve")
VLLM_API_SERVER = ("python3", "-m", "vllm.entrypoints.openai.api_server")
# Images whose entrypoint is vLLM's server: a container giving them only args runs vLLM.
VLLM_IMAGES = ("vllm/vllm-openai", "vllm/vllm-openai-rocm", "rocm/vllm")
# The first release whose image entrypoint is `vllm serve` (rocm/vllm tags are not
# versions: they take the default).
VLLM_SERVE_SINCE = {"vllm/vllm-openai": Version(0, 14, 0), "vllm/vllm-openai-rocm": Version(0, 14, 0)}

_RELEASE = re.compile(r"v?(\d+\.\d+\.\d+)(?:[-+].*)?")


def image_name(image: str) -> str:
    """``registry/org/name:tag@digest`` -> ``org/name`` (Docker Hub's implicit registry dropped)."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        name = name[: len(name) - len(last)] + last.split(":", 1)[0]
    parts = name.split("/")
    if len(parts) > 2 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]
    return "/".join(parts)


def image_tag(image: str) -> str:
    """The tag of ``name:tag[@digest]``, "" when there is none (a bare digest, or nothing)."""
    last = image.split("@", 1)[0].rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else ""


def release(image: str) -> Version | None:
    """The release an image's tag names (``v0.23.0`` -> 0.23.0), None when it names none."""
    m = _RELEASE.fullmatch(image_tag(image))
    if m is None:
        return None
    try:
        return Version.parse(m.group(1))
    except ValueError:     # a leading zero (v0.023.0): not a release number
        return None


def is_vllm_image(image: str) -> bool:
    return image_name(image) in VLLM_IMAGES


def vllm_entrypoint(image: str) -> tuple[str, ...] | None:
    """What a vLLM image runs given only args; None for an image that is not vLLM's.

    An image older than ``VLLM_SERVE_SINCE`` runs the api_server module; a newer one, or
    one whose version is unknown (``latest`` is the newest), runs ``vllm serve``."""
    if not is_vllm_image(image):
        return None
    since, version = VLLM_SERVE_SINCE.get(image_name(image)), release(image)
    if since is not None and version is not None and version < since:
        return VLLM_API_SERVER
    return VLLM_SERVE


def model_form(image: str) -> str:
    """How the image's entrypoint should be told the model path: POSITIONAL or FLAG."""
    since, version = VLLM_SERVE_SINCE.get(image_name(image)), release(image)
    if since is not None and version is not None and version >= since:
        return POSITIONAL
    return FLAG


def with_model(args: Sequence[str], image: str, path: str) -> list[str]:
    """``args`` with the model ``path`` added in the form ``image`` takes."""
    if model_form(image) == POSITIONAL:
        return [path, *args]
    return [*args, f"--model={path}"]
