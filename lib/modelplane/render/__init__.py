"""``modelplane render``: classic ``crossplane render`` (CLI v2.0–v2.2) in Python.

Modules, one job each:

- ``loader`` (+ ``reader``, ``yaml11``, ``defaults``): files -> checked inputs;
  ``nodes``: YAML events -> nodes without recursion, to go-yaml's 10,000 levels
- ``deepstack``: room to recurse through such a document (render and validate run in it)
- ``fetch``: answer resource selectors from ``-e``/``--extra-resources``
- ``runners``: reach functions (Development targets, local processes,
  in-process servers) through a reusable ``FunctionPool``
- ``engine``: the pipeline and requirements loop -> ``RenderOutput``
- ``finish``: composed-resource metadata and the XR's conditions
- ``yamlout``: byte-exact YAML as go-yaml v2 prints it
- ``schemas``: ``-s/--required-schemas``: SchemaSelectors answered offline
- ``wire``: requests assembled from already serialised bytes
- ``errors``: ``RenderError``, the one error render raises on purpose

Its command line is ``modelplane.cli.render`` (flags, stdout/stderr, exit codes).

Reuse (``modelplane simulate``)::

    with FunctionPool() as pool:
        for xr in xrs:
            out = render(RenderInputs(xr=xr, composition=c, functions=fns), pool)
"""
from modelplane.render.engine import RenderInputs, RenderOutput, documents, render
from modelplane.render.errors import RenderError
from modelplane.render.runners import FunctionPool, InProcessServer
from modelplane.render.yamlout import dump_documents

__all__ = [
    "FunctionPool",
    "InProcessServer",
    "RenderError",
    "RenderInputs",
    "RenderOutput",
    "documents",
    "dump_documents",
    "render",
]
