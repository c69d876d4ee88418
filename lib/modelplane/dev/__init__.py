"""Tools for developing Modelplane itself, never used at run time.

- ``schemagen``: the Pydantic models in ``schemas/`` from the XRDs in ``apis/``
  (``make schemas``)
"""
