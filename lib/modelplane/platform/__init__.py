"""The platform team's kinds: InferenceCluster and InferenceGateway.

``cluster`` composes one InferenceCluster from a table of cloud sources
(``clouds``: GKE, EKS, Existing differ as data; the shared steps are written
once), the inference stack (``stack``), the in-cluster gateway
(``gateway``) and the pool status (``pools``). ``control_plane`` composes the
one InferenceGateway.
"""
