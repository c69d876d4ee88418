"""Control-plane routing: ModelEndpoint Backends and the ModelService route.

- ``backend``: an Envoy Gateway Backend (and an optional credential filter)
  from a ModelEndpoint's URL and auth;
- ``service``: the ModelService HTTPRoute with exact weights;
- ``timeouts``: the request timeout every composed route rule carries.
"""
