"""Remote workloads of a ModelReplica: pods, claims and the three serving shapes.

``replica.assemble`` turns a parsed ModelReplica into the provider-kubernetes
Objects that run it on its cluster; each module builds one shape:

- ``pods``: the pod template of one member (engine container, env, cache,
  /dev/shm, DRA claims, pool node selector, GPU toleration);
- ``engines``: engine images by version (what an args-only container runs, and
  the form a cached model path takes: ``vllm serve PATH`` or ``--model=PATH``);
- ``claims``: the ResourceClaimTemplate of a member's DRA devices;
- ``standalone``: Deployment + Service for a Standalone engine;
- ``gang``: LeaderWorkerSet + InferencePool + endpoint picker for a Leader/Worker engine;
- ``disaggregated``: the llm-d prefill/decode shape over two engines;
- ``replica``: assembling all of it, the replica route and the status;
- ``secrets``: the Secrets the pods read, copied to the replica's cluster under
  replica-scoped names, and the pod templates rewritten to read the copies;
- ``engine_status``: what the engines say (the engine observer's report, read
  back through an Observe-only Object) in status and the Serving condition;
- ``upgrade``: the pod changes an upgrade brings to a running workload, held
  until needed (no restart of every replica at upgrade time).
"""
