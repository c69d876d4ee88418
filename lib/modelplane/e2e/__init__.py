"""Real Crossplane on the lab: a control-plane cluster that reconciles Modelplane.

``modelplane e2e up`` starts, on loopback (on the lab's host address when the lab has
its data plane), a control-plane API server (etcd + kube-apiserver from ``modelplane.kube``), kube-controller-manager, Crossplane
core v2.3 run out of cluster with ``--package-runtime=External``, a local OCI
registry holding every package ``crossplane.yaml`` depends on, and this
package's External runtime, which runs provider-kubernetes, provider-helm and
our eight functions (``modelplane serve``, or their package images with podman)
for the revisions the package manager creates. docs/e2e-crossplane.md says why each piece is what it is.

Modules, one job each:

- ``upstream``: the upstream programs and the module sources they came from
- ``registry``: Debian's docker-registry on a loopback port
- ``packages``: stage, build and push the Configuration, functions, providers
- ``package_runtime``: the External package runtime (functions and providers as processes)
- ``runtime_config``: the DeploymentRuntimeConfig a provider runs with, and the flags it gives it
- ``image_runtime``: functions run from their package image by podman (``MODELPLANE_E2E_FUNCTIONS=image``)
- ``podman``: podman with the project's ``containers.conf`` and storage; its Docker API socket
- ``ocilayout``: reproducible image layers, configs and ``docker save`` archives (``make images``)
- ``core``: ``crossplane core init`` and ``crossplane core start``
- ``charts``: stand-in charts for provider-helm's chart cache
- ``supervise``: the controller process (runtime passes, the control plane's gateway stand-in)
- ``fleet``: the platform manifests rewritten as ``Existing`` InferenceClusters of the lab
- ``parity``: ``modelplane simulate --lab`` over the same fleet, recorded for the comparison
- ``gateway``: with the lab's data plane, a Traefik serving the control plane's Gateway and routes
- ``traffic``: which ModelServices the lab can answer, and one request to each
- ``controlplane``: brings it all up and down, records what runs

The processes, ports, HTTP probes and certificates (Crossplane's CA signing
loopback leaves) are ``modelplane.kube``'s; the command, ``modelplane e2e
up|status|down``, is ``modelplane.cli.e2e``.
"""
