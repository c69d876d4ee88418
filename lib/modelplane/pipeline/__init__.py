"""What a composition function touches: one pipeline step, from the wire to ``fn.py`` and back.

Named apart from the Crossplane SDK's ``crossplane.function`` (whose request,
response and resource helpers this package builds on), this is the one place
Modelplane meets protobuf on the function side:

- ``received``: a RunFunctionRequest as it arrives, required resources kept as
  wire bytes until read
- ``structwire``: plain data to a Struct's wire bytes, byte for byte as the SDK writes them,
  or to bytes that parse into the Struct ``update`` builds (desired resources)
- ``structs``: a protobuf Struct as plain data, in one pass
- ``xr``: an XR read through its generated Pydantic model, errors naming the field
- ``composition``: ``Composition``, the object every ``fn.py`` writes to (desired
  state seeded from observed, conditions, requirements, TTL)
- ``memo``: values memoised by a digest of wire bytes (bounded, least recently used out)
- ``plain``: a Struct's plain data converted once per its bytes, each caller given a fresh copy
- ``server``: the gRPC server every function runs in (``modelplane serve``)
- ``answers``: the last answer given each XR, given again for the same request when it holds whatever the time
- ``heap``: after each call, what survived is frozen out of the garbage collector's full passes
- ``arena``: glibc's heap set up for large requests before the server starts (one arena, pages kept)
"""

# A function server started by another process (``render``, ``simulate``) stops once the process
# this variable names is no longer its parent. Here, not in ``server``: the starters need the name
# without importing the server.
PARENT_PID_ENV = "MODELPLANE_PARENT_PID"
