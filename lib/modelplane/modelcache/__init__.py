"""ModelCache: model weights staged once per workload cluster.

For every InferenceCluster a ModelCache selects, compose-model-cache puts on
that cluster (through provider-kubernetes Objects under the cluster's
ClusterProviderConfig):

- the team's Namespace (shared, never deleted by us),
- a ReadWriteMany PVC named ``naming.cache_pvc_name(cache)`` on the cluster's
  cache StorageClass,
- optionally a Secret holding the Hugging Face token, copied from the
  control-plane Secret by provider-kubernetes (``references.patchesFrom``),
  so the token never passes through our manifests, status or logs,
- a hydration Job that downloads ``repo@revision`` into the PVC once,
- beside each of those that deletes its remote object, a Usage keeping the
  cluster's ClusterProviderConfig until it is gone (docs/contracts.md,
  "Deletion order").

Modules: ``targets`` (which clusters, and what each is missing),
``hydrate`` (the remote object builders), ``status`` (per-cluster phase from
the observed Job and PVC), ``compose`` (one ModelCache: the objects per
cluster and the status they imply).
"""
