"""ModelDeployment: where each replica runs, and the ModelReplicas that run it.

compose-model-deployment reads the deployment, the InferenceClusters it may
use, every InferenceClass and its ModelCache; hands them to the fleet
scheduler (``modelplane.scheduler``); and composes one ModelReplica plus one
ModelEndpoint per placed replica (docs/contracts.md).

Modules:

- ``clusters``: the InferenceClusters read as the scheduler's dataclasses,
  memoised by their wire bytes.
- ``routed``: the backends the namespace's ModelService routes carry, read
  from wire bytes (namespace and ``routedBackends`` only), once per version.
- ``inputs``: requirements and adapters from the fetched resources to the
  scheduler's dataclasses. Clusters are read field by field straight from
  protobuf Structs: a fleet of 1,000 clusters is never turned into dicts.
- ``observed``: the deployment's own children, each ModelReplica paired
  with its ModelEndpoint, and the annotations that carry state.
- ``validate``: what the schema cannot check (CEL selectors compile).
- ``revision``: the template revision, a hash of what reaches the pods.
- ``strategy``: ``spec.strategy`` and ``spec.failover`` resolved to numbers.
- ``rollout``: one rolling-update (or Recreate) step, and Progressing.
- ``failover``: which clusters are down, which have failed, when to look again.
- ``plan``: failover and the rollout step together: which observed
  replicas count, which are extra, how many the scheduler keeps.
- ``drain``: how a replica leaves: out of routing first, deleted later.
- ``compose``: the ModelReplica and ModelEndpoint builders and which
  children to desire, keep or drop.
- ``status``: status.replicas/placements/removals and the Scheduled condition.
"""
