"""Modelplane: the shared library behind every composition function.

Each folder answers one question and imports only the layers below it
(``LAYERS``, bottom first; ``tests/architecture/test_layers.py`` fails on an
upward import, an import between two packages of one layer, or a cycle):

==================  =================================================================
layer               packages (what question each answers)
==================  =================================================================
vocabulary          ``errors`` ``conditions`` ``labels`` ``naming`` ``objects``
                    ``quantity`` ``semver`` ``paths`` ``clock``: words every other
                    layer uses (``clock``: the one place the wall clock is read)
api, seam, CEL      ``schemas`` (the XRs as Pydantic models, generated), ``pipeline``
                    (one pipeline step as a function sees it: request, Composition,
                    gRPC server), ``cel`` (the DRA CEL engine), ``secretcopy`` (a
                    Secret copied to a workload cluster by two Objects, neither
                    holding its value)
scheduler           ``scheduler``: where can a replica run (keep, filter, score, bind)
kinds               ``workloads`` (what runs on a cluster), ``routing`` (endpoints and
                    services), ``platform`` (classes, clusters, gateways)
composite kinds     ``modelcache``, ``deployment``: kinds built on the ones above
functions           ``functions``: the eight ``fn.py`` and their registry
loopback programs   ``kube``: upstream programs on this machine (processes, ports,
                    PKI, command lines, etcd, kube-apiserver, a small client);
                    ``mockengine``: an OpenAI-compatible mock engine (no weights)
render              ``render``: ``crossplane render``, in Python; ``observer``: the
                    engine observer each workload cluster runs (pods -> reports)
validate            ``validate``: offline admission (schemas, defaults, CEL rules)
physical            ``physical``: what a workload cluster holds and runs; the
                    ``PhysicalFleet`` interface the reconcile loop drives
fleet drivers       ``simulate`` (the reconcile loop), ``lab`` (real clusters behind
                    ``PhysicalFleet``): siblings, neither imports the other
e2e                 ``e2e``: real Crossplane over the lab
command line        ``cli`` (dispatches to every layer), ``dev`` (``make schemas``)
==================  =================================================================

Modules are nouns (``quantity``, ``scheduler``), pure functions over plain
data; nothing imports protobuf except the seam (``pipeline``) and the tools
that speak to functions (``render``, ``simulate``).
"""

# Bottom first. A package may import a package of a lower layer only; packages that share a layer
# never import each other. Written once: the architecture test and the docs read it from here.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "conditions", "labels", "naming", "objects", "quantity", "semver", "paths", "clock"),
    ("schemas", "pipeline", "cel", "secretcopy"),
    ("scheduler",),
    ("workloads", "routing", "platform"),
    ("modelcache", "deployment"),
    ("functions",),
    ("kube", "mockengine"),
    ("render", "observer"),
    ("validate",),
    ("physical",),
    ("simulate", "lab"),
    ("e2e",),
    ("cli", "dev"),
)
