"""Tools for developing Modelplane itself, never used at run time.

- ``schemagen``: the Pydantic models in ``schemas/`` from the XRDs in ``apis/``
  (``make schemas``)
- ``apidocs``: the API reference pages of the docs site from the same XRDs (``make docs``)
- ``sitehooks``: the MkDocs hooks of the docs site (diagrams rendered at build time)
- ``codeblocks``: the docs site's code blocks rewritten for reading (output classed, each
  line's indentation kept for wrapping), called by ``sitehooks``
"""
