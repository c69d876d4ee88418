"""The platform team's kinds: InferenceCluster and InferenceGateway.

``cluster`` composes one InferenceCluster from a table of cloud sources
(``clouds``: GKE, EKS, AKS, Nebius, Vultr, Existing differ as data; the shared steps are
written once), the inference stack (``stack``), the engine observer
(``engine_observer``: its account, rights and Deployment), the in-cluster gateway
(``gateway``) and the pool status (``pools``). ``control_plane`` composes the
one InferenceGateway. ``inference_class`` checks an InferenceClass.

- sources: ``gke`` (+ ``gke_network``, ``gke_dra``: GPU pools as GKE's DRA guide
  asks), ``eks`` (+ ``eks_network``), ``aks`` (+ ``aks_names``: AKS node pool names),
  ``nebius``, ``vultr`` (+ ``neocloud_names``: their resource names), ``existing``
- ``gpu_drivers``: the GPU driver each cloud's pool gets and the DRA driver release that
  starts on it (tables with sources)
- ``ordering``: deletion order as Crossplane Usages (clouds, provider configs)
- ``common``: the namespace, labels, refs and condition types every builder shares
"""
