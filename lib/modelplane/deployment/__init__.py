"""ModelDeployment: where each replica runs, and the ModelReplicas that run it.

compose-model-deployment reads the deployment, the InferenceClusters it may
use, every InferenceClass and its ModelCache; hands them to the fleet
scheduler (``modelplane.scheduler``); and composes one ModelReplica plus one
ModelEndpoint per placed replica (docs/contracts.md).

Modules:

- ``inputs``: requirements and adapters from the fetched resources to the
  scheduler's dataclasses. Clusters are read field by field straight from
  protobuf Structs: a fleet of 1,000 clusters is never turned into dicts.
- ``validate``: what the schema cannot check (CEL selectors compile).
- ``compose``: the ModelReplica and ModelEndpoint builders and which
  children to desire, keep or drop.
- ``status``: status.replicas/placements and the Scheduled condition.
"""
