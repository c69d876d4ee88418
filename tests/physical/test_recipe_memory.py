"""The recipe pages size GPUs with the memory the driver publishes, not the size in the product's name.

An "H100 80GB" publishes 79.6 GiB and an "L4 24 GB" 22.5 GiB (``driver_values.ROWS``); a page
that divides "the L4's 24 GiB" overstates the KV cache it promises. Product names keep their
marketing sizes (they are names, and written in GB); every GiB figure that enters GPU-memory
arithmetic on a recipe page must be the value table's:

- ``N × X = Y GiB``: X is the published GiB of the GPU the paragraph last names, written as the
  GPU classes page writes it (one decimal, ``gib()``), and Y is N times the published memory,
  rounded as the page rounds Y;
- ``<count> <GPU> (Y GiB)``: Y is count times the published memory;
- ``<GPU>'s X GiB``, ``<GPU> publishes X GiB``, ``X GiB <GPU>``: X is the published GiB;
- ``P% of X GiB`` (of one GPU): X is its published GiB, and a result beside it is P% of it;
- a quoted ```NNNMi``` is a published memory of the table;
- no ``80 GiB GPU``: a GPU stands by its name, not by a size;
- the page's "Why" section links the GPU classes page, where the values and their sources are.

Code blocks are not prose and are left out (their manifests are checked by test_driver_values).
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Decimal

import pytest
from modelplane.physical import driver_values as dv

from tests.docs import pages

# How the recipe pages name each GPU in prose -> the productName of its row in the value table.
GPUS = {
    "L4": "NVIDIA L4", "L40S": "NVIDIA L40S", "A100": "NVIDIA A100-SXM4-80GB",
    "H100": "NVIDIA H100 80GB HBM3", "H200": "NVIDIA H200", "B200": "NVIDIA B200",
    "MI300X": "AMD_Instinct_MI300X_OAM",
}
COUNTS = {"one": 1, "two": 2, "four": 4, "eight": 8, "sixteen": 16}

_GPU = r"\b(L40S|L4|A100|H100|H200|B200|MI300X)\b"
_NUM = r"(\d[\d,]*(?:\.\d+)?)"
_GPU_RE = re.compile(_GPU)
_PRODUCT = re.compile(rf"\b(\d+) × {_NUM}(?: GiB)? = {_NUM} GiB")
_GROUP = re.compile(rf"\b(\d+|{'|'.join(COUNTS)}) {_GPU}s? \({_NUM} GiB\)", re.IGNORECASE)
_EACH = (re.compile(rf"{_GPU}(?:'s| publishes| has) {_NUM} GiB"), re.compile(rf"{_NUM} GiB {_GPU}"))
_SHARE = re.compile(rf"(\d+)% of (?:the {_GPU}'s )?{_NUM} GiB(?:,? \(| is ){_NUM} GiB")
_SHARE_OF = re.compile(rf"(\d+)% of {_NUM} GiB")
_QUOTED_MI = re.compile(r"`(\d+)Mi`")
_BARE = re.compile(rf"{_NUM} GiB GPUs?\b")
_WHY = re.compile(r"^## Why.*?(?=^## )", re.MULTILINE | re.DOTALL)
_LINK = "](../platform/gpu-classes.md)"


def _row(gpu: str) -> dv.Row:
    row = dv.row(dv.AMD_DRIVER if gpu == "MI300X" else dv.NVIDIA_DRIVER, GPUS[gpu])
    assert row is not None, f"{gpu}: {GPUS[gpu]!r} is not in the value table"
    return row


def _gib(gpu: str) -> Decimal:
    return Decimal(_row(gpu).memory_mi()) / 1024


def _rounded_as(value: Decimal, written: str) -> bool:
    """``value`` rounded to as many decimals as ``written`` shows equals ``written``."""
    want = Decimal(written.replace(",", ""))
    return value.quantize(Decimal(1).scaleb(want.as_tuple().exponent), ROUND_HALF_UP) == want


def _paragraphs(page: pages.Page) -> Iterator[str]:
    """The page's prose, one paragraph per item, line breaks as spaces; code blocks left out."""
    lines = page.text.splitlines()
    for fence in page.fences:
        lines[fence.line - 1:fence.end] = [""] * (fence.end - fence.line + 1)
    for para in re.split(r"\n\s*\n", "\n".join(lines)):
        yield " ".join(para.split())


def problems(paragraph: str) -> list[str]:
    """What in one paragraph of prose uses a GPU memory the driver does not publish."""
    out = []
    for m in _PRODUCT.finditer(paragraph):
        named = _GPU_RE.findall(paragraph[:m.start()])
        if not named:
            out.append(f"{m.group(0)!r}: name the GPU before its arithmetic")
            continue
        gpu, n, x, y = named[-1], int(m.group(1)), m.group(2), m.group(3)
        if x != dv.gib(_row(gpu).memory):
            out.append(f"{m.group(0)!r}: the {gpu} publishes {dv.gib(_row(gpu).memory)} GiB, not {x}")
        elif not _rounded_as(n * _gib(gpu), y):
            out.append(f"{m.group(0)!r}: {n} × the {gpu}'s published memory is {n * _gib(gpu):.2f} GiB")
    for m in _GROUP.finditer(paragraph):
        count, gpu, y = m.group(1).lower(), m.group(2), m.group(3)
        n = int(COUNTS.get(count, count))
        if not _rounded_as(n * _gib(gpu), y):
            out.append(f"{m.group(0)!r}: {n} × the {gpu}'s published memory is {n * _gib(gpu):.2f} GiB")
    for pattern in _EACH:
        for m in pattern.finditer(paragraph):
            gpu, x = (m.group(1), m.group(2)) if pattern is _EACH[0] else (m.group(2), m.group(1))
            if x != dv.gib(_row(gpu).memory):
                out.append(f"{m.group(0)!r}: the {gpu} publishes {dv.gib(_row(gpu).memory)} GiB, not {x}")
    for m in _SHARE_OF.finditer(paragraph):
        named = _GPU_RE.findall(paragraph[:m.start()])
        if not named:
            out.append(f"{m.group(0)!r}: name the GPU before its arithmetic")
        elif m.group(2) != dv.gib(_row(named[-1]).memory):
            out.append(f"{m.group(0)!r}: the {named[-1]} publishes {dv.gib(_row(named[-1]).memory)} GiB")
    for m in _SHARE.finditer(paragraph):
        named = [m.group(2)] if m.group(2) else _GPU_RE.findall(paragraph[:m.start()])
        share = Decimal(m.group(1)) / 100 * _gib(named[-1]) if named else None
        if share is not None and m.group(3) == dv.gib(_row(named[-1]).memory) and not _rounded_as(share, m.group(4)):
            out.append(f"{m.group(0)!r}: {m.group(1)}% of the {named[-1]}'s published memory is {share:.2f} GiB")
    published = {r.memory for r in dv.ROWS}
    for m in _QUOTED_MI.finditer(paragraph):
        if f"{m.group(1)}Mi" not in published:
            out.append(f"{m.group(0)!r}: no GPU in the value table publishes it")
    for m in _BARE.finditer(paragraph):
        out.append(f"{m.group(0)!r}: a size standing for a GPU; name the GPU and use its published memory")
    return out


RECIPES = [p for p in pages.pages() if p.name.startswith("recipes/") and p.name != "recipes/index.md"]


def test_there_are_recipes():
    assert len(RECIPES) >= 10, [p.name for p in RECIPES]


@pytest.mark.parametrize("page", RECIPES, ids=lambda p: p.path.stem)
def test_recipe_arithmetic_uses_published_memory(page: pages.Page):
    found = [f"{page.name}: {p}" for para in _paragraphs(page) for p in problems(para)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("page", RECIPES, ids=lambda p: p.path.stem)
def test_why_section_says_where_the_sizes_come_from(page: pages.Page):
    why = _WHY.search(page.text)
    assert why, f"{page.name}: no '## Why ...' section with the sizing arithmetic"
    assert _LINK in why.group(0), f"{page.name}: its Why section must link ../platform/gpu-classes.md"


def test_index_arithmetic_uses_published_memory():
    index = next(p for p in pages.pages() if p.name == "recipes/index.md")
    found = [p for para in _paragraphs(index) for p in problems(para)]
    assert not found, "\n".join(found)


# What the pages said before they used the published values: each must be caught.
@pytest.mark.parametrize("text", [
    "vLLM takes 90%, 21.6 GiB of the L4's 24 GiB, which leaves roughly 5 GiB",
    "One H100 node has 8 × 80 = 640 GiB in total",
    "One H200 node has 8 × 141 = 1,128 GiB: the weights fit",
    "One H200 node has 8 × 140.4 = 1,128 GiB: the weights fit",
    "Two 80 GiB GPUs (160 GiB) would hold them",
    "Eight H200 (1,128 GiB) would do as well",
    "more than one 48 GiB L40S",
    "Eight give 8 × 179.1 = 1,432 GiB",
    "One L40S publishes `49152Mi`",
    "On an H100, at vLLM's default 90% of 80 GiB (72 GiB), about 10 GiB remains",
    "fits a single 80 GB GPU. At vLLM's default 90% of 80 GiB (72 GiB), about 10 GiB remains",
    "at vLLM's default 90% of the H100's 79.6 GiB (72.0 GiB)",
])
def test_marketing_sizes_are_caught(text: str):
    assert problems(text)


@pytest.mark.parametrize("text", [
    "20.2 GiB of the L4's 22.5 GiB",
    "one H100 node has 8 × 79.6 = 637 GiB in total",
    "Two H100 (159.3 GiB) would hold the weights",
    "Eight H200 (1,123 GiB) would do as well",
    "the MI300X publishes `196592Mi`, so four give 4 × 192.0 = 768 GiB",
    "One H100 80GB fits a single 80 GB GPU",
    "at vLLM's default 90% of the H100's 79.6 GiB (71.7 GiB), about 10 GiB remains",
])
def test_published_sizes_pass(text: str):
    assert problems(text) == []
