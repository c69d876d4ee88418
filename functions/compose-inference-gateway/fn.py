"""compose-inference-gateway: Envoy Gateway and the ``modelplane`` Gateway on the control plane.

Recipe (API.md, "InferenceGateway"): read the XR, install Envoy Gateway with
its Backend API and compose its GatewayClass (unless spec.gatewayClassName
names a class the control plane already runs), compose the Gateway
ModelServices attach their HTTPRoutes to, add MetalLB when the load balancer is MetalLB, then
publish the Gateway's address.
"""
from modelplane.pipeline.composition import Composition
from modelplane.platform import control_plane


def compose(c: Composition) -> None:
    spec = control_plane.read(c)
    lbls = control_plane.gateway_labels(c)
    control_plane.compose_envoy(c, spec, lbls)
    control_plane.compose_metallb(c, spec, lbls)
    control_plane.report(c, spec)
