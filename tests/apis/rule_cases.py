"""The admission-rule cases of our XRDs: each row is a manifest built from a
valid base with one change, and the finding (path and message) the change must
produce, or none. test_xrd_rules.py runs them through the offline validator;
tests/upstream runs them through the real API server and beta validate."""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Doc = dict[str, Any]


def container(**kw) -> Doc:
    return {"name": "engine", "image": "vllm/vllm-openai:v0.23.0", **kw}


def member(role="Standalone", **kw) -> Doc:
    m = {"role": role, "nodeSelector": {"devices": [{"name": "gpu", "count": 1, "selectors": [
        {"cel": 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("20Gi")) >= 0'}]}]},
         "template": {"spec": {"containers": [container()]}}}
    if role == "Worker":
        m["worker"] = {"nodes": 1}
    m.update(kw)
    return m


def engine(name="qwen", members=None, **kw) -> Doc:
    return {"name": name, "members": members or [member()], **kw}


def md(**spec) -> Doc:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelDeployment",
            "metadata": {"name": "m", "namespace": "ml-team"}, "spec": {"engines": [engine()], **spec}}


def gang(**kw) -> Doc:
    return engine(members=[member("Leader"), member("Worker")], **kw)


def pd(prefill="Prefill", decode="Decode") -> Doc:
    return md(serving={"mode": "PrefillDecode"},
              engines=[engine("p", phase=prefill), engine("d", phase=decode)])


def icl(**device) -> Doc:
    dev = {"name": "gpu", "driver": "gpu.nvidia.com", "deviceClassName": "gpu.nvidia.com",
           "attributes": {"architecture": {"string": "Ada"}}, "capacity": {"memory": {"value": "24Gi"}}}
    dev.update(device)
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceClass", "metadata": {"name": "c"},
            "spec": {"devices": [{k: v for k, v in dev.items() if v is not None}]}}


def ic(source="GKE", blocks=("gke",), **pool) -> Doc:
    all_blocks = {"gke": {"region": "us-central1"}, "eks": {"region": "us-east-1", "subnetIds": ["a", "b"]},
                  "aks": {"location": "eastus2"},
                  "existing": {"kubeconfigSecretRef": {"namespace": "ns", "name": "kc"}}}
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster", "metadata": {"name": "c"},
            "spec": {"cluster": {"source": source, **{b: all_blocks[b] for b in blocks}},
                     "nodePools": [{"name": "l4", "class": "gke-l4-1x-g2", "nodeCount": 1, **pool}]}}


def ig(name="default", **spec) -> Doc:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceGateway", "metadata": {"name": name},
            "spec": spec}


def me(url="https://api.together.xyz", **spec) -> Doc:
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelEndpoint",
            "metadata": {"name": "e", "namespace": "ml-team"}, "spec": {"url": url, **spec}}


def mc(**source) -> Doc:
    src = {"type": "HuggingFace", "huggingFace": {"repo": "Qwen/Qwen3-8B", "sizeGiB": 20}}
    src.update(source)
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelCache",
            "metadata": {"name": "c", "namespace": "ml-team"}, "spec": {"source": {k: v for k, v in src.items()
                                                                                  if v is not None}}}


def edit(doc: Doc, change: Callable[[Doc], Any]) -> Doc:
    doc = copy.deepcopy(doc)
    change(doc)
    return doc


def tpl(doc: Doc) -> Doc:
    return doc["spec"]["engines"][0]["members"][0]["template"]


@dataclass(frozen=True)
class Case:
    name: str
    doc: Doc
    path: str | None = None      # None: the manifest is accepted
    message: str = ""            # a substring of the finding's message
    extra: tuple = field(default=())


MSG_MEMBERS = ("members must be exactly one Standalone member, or one Leader and one Worker member: a gang has one "
               "worker template, so merge Worker members and set worker.nodes to the total")
MSG_PD = "serving.mode PrefillDecode needs exactly two engines"
MSG_PHASE = "engines[].phase is only allowed with serving.mode: PrefillDecode"
MSG_GANG = "a gang) needs spec.modelCacheRef"
MSG_WORKER_NEEDS = "a Worker member needs worker.nodes"
MSG_WORKER_ONLY = "worker is only allowed on a Worker member"
MSG_RESERVED = "label keys under modelplane.ai/ are reserved"
MSG_ENGINE = 'exactly one container, named "engine"'
MSG_SOURCE = "spec.cluster must carry exactly the block its source names"
MSG_POOL = "minNodeCount must not exceed maxNodeCount"
MSG_GKE_NET = "gke.subnetwork belongs to an existing network"
MSG_GKE_VERSION = "gke.kubernetesVersion must be 1.34 or later"
MSG_GKE_DRIVER = "gke.accelerator.gpuDriverVersion must be INSTALLATION_DISABLED"
MSG_EKS_NET = "eks.network describes the VPC Modelplane composes"
MSG_AKS_NET = "aks.network.cidr describes the virtual network Modelplane composes"
MSG_ATTR = "exactly one of string, int, bool or version"
MSG_DRA = "a DRA device needs deviceClassName"
MSG_IG = "must be named default"
MSG_METALLB = "loadBalancer MetalLB needs spec.metallb.addresses"
MSG_TLS = "spec.tls applies to https URLs only"
MSG_HF = "source type HuggingFace needs source.huggingFace"
MSG_UNMOUNTED = "every secret volume must be mounted"
MSG_UNDECLARED = "a volumeMounts entry names a volume that template.spec.volumes does not declare"
MSG_MOUNT_ABS = "volumeMounts[].mountPath must be an absolute path"
MSG_MOUNT_OURS = "/dev/shm and /mnt/models are mounted by Modelplane"
MSG_VOL_LABEL = "volumes[].name must be a DNS label"
MSG_VOL_OURS = "volume names dshm and models are Modelplane's"
MSG_ITEM_PATH = "items[].path must be relative"


def secret_volume(doc: Doc, volume: Doc | None = None, mount: Doc | bool | None = None) -> None:
    """A member reading Secrets through envFrom and a volume; mount=False leaves the volume unmounted."""
    spec = tpl(doc)["spec"]
    spec["volumes"] = [volume or {"name": "certs", "secret": {"secretName": "tls"}}]
    if mount is not False:
        spec["containers"][0]["volumeMounts"] = [mount or {"name": "certs", "mountPath": "/etc/certs"}]
    spec["containers"][0]["envFrom"] = [{"secretRef": {"name": "engine-env"}, "prefix": "ENGINE_"}]

MEMBERS = "spec.engines[0].members"
CASES = [
    # ModelDeployment: engine shapes.
    Case("standalone alone", md()),
    Case("leader and worker", md(modelCacheRef={"name": "c"},
                                 engines=[engine(members=[member("Leader"), member("Worker")])])),
    # A LeaderWorkerSet has one worker template: two Worker members cannot be composed.
    Case("leader plus two workers", md(modelCacheRef={"name": "c"},
                                       engines=[engine(members=[member("Leader"), member("Worker"), member("Worker")])]),
         MEMBERS, MSG_MEMBERS),
    Case("two standalones", md(engines=[engine(members=[member(), member()])]), MEMBERS, MSG_MEMBERS),
    Case("leader without worker", md(modelCacheRef={"name": "c"}, engines=[engine(members=[member("Leader")])]),
         MEMBERS, MSG_MEMBERS),
    Case("two leaders", md(modelCacheRef={"name": "c"},
                           engines=[engine(members=[member("Leader"), member("Leader"), member("Worker")])]),
         MEMBERS, MSG_MEMBERS),
    Case("standalone beside a gang", md(modelCacheRef={"name": "c"},
                                        engines=[engine(members=[member("Leader"), member("Worker"), member()])]),
         MEMBERS, MSG_MEMBERS),
    # worker.nodes only, and always, on a Worker.
    Case("worker without nodes", md(modelCacheRef={"name": "c"}, engines=[engine(members=[
        member("Leader"), {k: v for k, v in member("Worker").items() if k != "worker"}])]),
         "spec.engines[0].members[1]", MSG_WORKER_NEEDS),
    Case("worker block on a standalone", md(engines=[engine(members=[member(worker={"nodes": 1})])]),
         "spec.engines[0].members[0]", MSG_WORKER_ONLY),
    # Gangs need a cache.
    Case("gang with cache", md(modelCacheRef={"name": "c"}, engines=[gang()])),
    Case("gang without cache", md(engines=[gang()]), "spec.modelCacheRef", MSG_GANG),
    # Prefill/decode.
    Case("prefill decode pair", pd()),
    Case("two prefills", pd(decode="Prefill"), "spec.engines", MSG_PD),
    Case("prefill decode with one engine", md(serving={"mode": "PrefillDecode"}, engines=[engine(phase="Prefill")]),
         "spec.engines", MSG_PD),
    Case("phase under Unified", md(engines=[engine(phase="Prefill")]), "spec.engines", MSG_PHASE),
    # Member template.
    Case("template labels", edit(md(), lambda d: tpl(d).update(metadata={"labels": {"app": "qwen"}}))),
    Case("reserved template label", edit(md(), lambda d: tpl(d).update(
        metadata={"labels": {"modelplane.ai/deployment": "x"}})),
         "spec.engines[0].members[0].template.metadata.labels", MSG_RESERVED),
    Case("container not named engine", edit(md(), lambda d: tpl(d)["spec"]["containers"][0].update(name="vllm")),
         "spec.engines[0].members[0].template.spec.containers", MSG_ENGINE),
    Case("two containers", edit(md(), lambda d: tpl(d)["spec"]["containers"].append(container(name="sidecar"))),
         "spec.engines[0].members[0].template.spec.containers", MSG_ENGINE),
    Case("privileged field rejected", edit(md(), lambda d: tpl(d)["spec"].update(hostNetwork=True)),
         "spec.engines[0].members[0].template.spec.hostNetwork", "unknown field"),
    Case("container securityContext rejected", edit(md(), lambda d: tpl(d)["spec"]["containers"][0].update(
        securityContext={"privileged": True})),
         "spec.engines[0].members[0].template.spec.containers[0].securityContext", "unknown field"),
    # Secrets: envFrom and mounted secret volumes, nothing else.
    Case("envFrom and a mounted secret volume", edit(md(), lambda d: secret_volume(d, {
        "name": "certs", "secret": {"secretName": "tls", "items": [{"key": "tls.crt", "path": "certs/tls.crt"}],
                                    "defaultMode": 256}}))),
    Case("secret volume not mounted", edit(md(), lambda d: secret_volume(d, mount=False)),
         "spec.engines[0].members[0].template.spec.volumes", MSG_UNMOUNTED),
    Case("mount of an undeclared volume", edit(md(), lambda d: secret_volume(
        d, mount={"name": "other", "mountPath": "/etc/other"})),
         "spec.engines[0].members[0].template.spec.containers", MSG_UNDECLARED),
    Case("relative mount path", edit(md(), lambda d: secret_volume(d, mount={"name": "certs", "mountPath": "etc/c"})),
         "spec.engines[0].members[0].template.spec.containers[0].volumeMounts[0]", MSG_MOUNT_ABS),
    Case("mount over the model cache", edit(md(), lambda d: secret_volume(
        d, mount={"name": "certs", "mountPath": "/mnt/models/certs"})),
         "spec.engines[0].members[0].template.spec.containers[0].volumeMounts[0]", MSG_MOUNT_OURS),
    Case("volume name not a DNS label", edit(md(), lambda d: secret_volume(
        d, {"name": "Certs", "secret": {"secretName": "tls"}}, {"name": "Certs", "mountPath": "/c"})),
         "spec.engines[0].members[0].template.spec.volumes[0].name", MSG_VOL_LABEL),
    Case("volume named like ours", edit(md(), lambda d: secret_volume(
        d, {"name": "dshm", "secret": {"secretName": "tls"}}, {"name": "dshm", "mountPath": "/c"})),
         "spec.engines[0].members[0].template.spec.volumes[0].name", MSG_VOL_OURS),
    Case("item path climbing out", edit(md(), lambda d: secret_volume(
        d, {"name": "certs", "secret": {"secretName": "tls", "items": [{"key": "k", "path": "../k"}]}})),
         "spec.engines[0].members[0].template.spec.volumes[0].secret.items[0].path", MSG_ITEM_PATH),
    Case("hostPath volume rejected", edit(md(), lambda d: secret_volume(
        d, {"name": "certs", "secret": {"secretName": "tls"}, "hostPath": {"path": "/"}})),
         "spec.engines[0].members[0].template.spec.volumes[0].hostPath", "unknown field"),
    Case("envFrom a ConfigMap rejected", edit(md(), lambda d: tpl(d)["spec"]["containers"][0].update(
        envFrom=[{"secretRef": {"name": "env"}, "configMapRef": {"name": "cfg"}}])),
         "spec.engines[0].members[0].template.spec.containers[0].envFrom[0].configMapRef", "unknown field"),
    Case("env from fieldRef, probes, shm", edit(md(), lambda d: (tpl(d)["spec"].update(shmSize="16Gi"), tpl(d)[
        "spec"]["containers"][0].update(
        env=[{"name": "VLLM_HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
        readinessProbe={"httpGet": {"path": "/health", "port": 8000}}, resources={"limits": {"cpu": 8}})))),
    Case("selector over 10 KiB", edit(md(), lambda d: d["spec"]["engines"][0]["members"][0]["nodeSelector"][
        "devices"][0]["selectors"][0].update(cel="true || " * 1300 + "true")),
         "spec.engines[0].members[0].nodeSelector.devices[0].selectors[0].cel", "10240"),
    Case("misspelled field", edit(md(), lambda d: d["spec"]["engines"][0].update(copys=2)),
         "spec.engines[0].copys", "unknown field"),
    # A missing, null (dropped, then missing) or unsupported value: kube-apiserver then runs
    # no rule (they would read what is not there) and says so once, at no field.
    Case("engines missing", edit(md(), lambda d: d["spec"].pop("engines")), "spec.engines", "Required value"),
    Case("engines null", edit(md(), lambda d: d["spec"].update(engines=None)), "spec.engines", "Required value"),
    Case("unsupported value beside a failing rule", md(strategy={"type": "Sometimes",
                                                                 "rollingUpdate": {"maxSurge": "25"}}),
         "spec.strategy.type", "Unsupported value"),
    # Rollout strategy and failover.
    Case("rolling update with a percentage", md(strategy={"type": "RollingUpdate",
                                                          "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
                                                failover={"after": "1h30m"})),
    Case("recreate", md(strategy={"type": "Recreate"}, failover={"after": "0"})),
    Case("maxSurge without %", md(strategy={"rollingUpdate": {"maxSurge": "25"}}),
         "spec.strategy.rollingUpdate.maxSurge", "maxSurge must be a non-negative integer or a percentage"),
    Case("negative maxUnavailable", md(strategy={"rollingUpdate": {"maxUnavailable": -1}}),
         "spec.strategy.rollingUpdate.maxUnavailable", "maxUnavailable must be a non-negative integer"),
    Case("surge and unavailability both 0", md(strategy={"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}),
         "spec.strategy.rollingUpdate", "maxSurge and maxUnavailable cannot both be 0"),
    Case("recreate with rollingUpdate", md(strategy={"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}),
         "spec.strategy", "rollingUpdate is only allowed with type: RollingUpdate"),
    Case("failover after in words", md(failover={"after": "5 minutes"}), "spec.failover.after", "match"),
    # InferenceCluster: the source block.
    Case("gke block for GKE", ic()),
    Case("eks block for EKS", ic("EKS", ("eks",))),
    Case("existing block for Existing", ic("Existing", ("existing",))),
    Case("aks block for AKS", ic("AKS", ("aks",))),
    Case("AKS with an eks block", ic("AKS", ("aks", "eks")), "spec.cluster", MSG_SOURCE),
    Case("EKS with only a region", edit(ic("EKS", ("eks",)), lambda d: d["spec"]["cluster"]["eks"].pop("subnetIds"))),
    Case("EKS network and subnetIds", edit(ic("EKS", ("eks",)), lambda d: d["spec"]["cluster"]["eks"].update(
        network={"cidr": "10.1.0.0/16"})), "spec.cluster.eks", MSG_EKS_NET),
    Case("GKE existing network and subnetwork", edit(ic(), lambda d: d["spec"]["cluster"]["gke"].update(
        network="vpc", subnetwork="nodes"))),
    Case("GKE subnetwork without network", edit(ic(), lambda d: d["spec"]["cluster"]["gke"].update(
        subnetwork="nodes")), "spec.cluster.gke", MSG_GKE_NET),
    Case("AKS cidr and subnetId", edit(ic("AKS", ("aks",)), lambda d: d["spec"]["cluster"]["aks"].update(
        network={"cidr": "10.1.0.0/16", "subnetId": "/subscriptions/s/x"})), "spec.cluster.aks.network", MSG_AKS_NET),
    Case("GKE 1.34", edit(ic(), lambda d: d["spec"]["cluster"]["gke"].update(kubernetesVersion="1.34"))),
    Case("GKE patch version", edit(ic(), lambda d: d["spec"]["cluster"]["gke"].update(
        kubernetesVersion="1.35.1-gke.1000"))),
    Case("GKE 1.33", edit(ic(), lambda d: d["spec"]["cluster"]["gke"].update(kubernetesVersion="1.33")),
         "spec.cluster.gke.kubernetesVersion", MSG_GKE_VERSION),
    Case("GKE 1.3", edit(ic(), lambda d: d["spec"]["cluster"]["gke"].update(kubernetesVersion="1.3")),
         "spec.cluster.gke.kubernetesVersion", MSG_GKE_VERSION),
    Case("GKE without a block", ic(blocks=()), "spec.cluster", MSG_SOURCE),
    Case("GKE with an eks block", ic(blocks=("gke", "eks")), "spec.cluster", MSG_SOURCE),
    Case("Existing with a gke block", ic("Existing", ("gke",)), "spec.cluster", MSG_SOURCE),
    Case("pool bounds", ic(minNodeCount=1, maxNodeCount=4)),
    Case("pool min above max", ic(minNodeCount=5, maxNodeCount=4), "spec.nodePools[0]", MSG_POOL),
    # InferenceClass devices.
    Case("typed attributes", icl(attributes={"a": {"string": "x"}, "b": {"int": 1}, "c": {"bool": False},
                                             "d": {"version": "9.0.0"}})),
    Case("attribute with two values", icl(attributes={"architecture": {"string": "Ada", "int": 1}}),
         "spec.devices[0].attributes[architecture]", MSG_ATTR),
    Case("attribute with no value", icl(attributes={"architecture": {}}),
         "spec.devices[0].attributes[architecture]", MSG_ATTR),
    Case("synthetic device without class", icl(name="nic", driver="nic.nvidia.com", claim="Synthetic",
                                                deviceClassName=None)),
    Case("DRA device without class", icl(deviceClassName=None), "spec.devices[0]", MSG_DRA),
    # InferenceClass GKE accelerators (DRA on GKE: GKE's driver installation off).
    Case("GKE accelerator, driver left to Modelplane", edit(icl(), lambda d: d["spec"].update(
        provisioning={"gke": {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4", "count": 1}}}))),
    Case("GKE accelerator, installation disabled", edit(icl(), lambda d: d["spec"].update(provisioning={"gke": {
        "machineType": "g2-standard-8",
        "accelerator": {"type": "nvidia-l4", "count": 1, "gpuDriverVersion": "INSTALLATION_DISABLED"}}}))),
    Case("GKE accelerator, GKE-installed driver", edit(icl(), lambda d: d["spec"].update(provisioning={"gke": {
        "machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4", "count": 1, "gpuDriverVersion": "LATEST"}}})),
         "spec.provisioning.gke.accelerator", MSG_GKE_DRIVER),
    # InferenceGateway.
    Case("gateway named default", ig()),
    Case("gateway named otherwise", ig("main"), "", MSG_IG),
    Case("MetalLB with addresses", ig(loadBalancer="MetalLB", metallb={"addresses": ["172.18.255.200/28"]})),
    Case("MetalLB without addresses", ig(loadBalancer="MetalLB"), "spec", MSG_METALLB),
    Case("metallb block on Cloud", ig(metallb={"addresses": ["10.0.0.0/28"]}), "spec", MSG_METALLB),
    # ModelEndpoint.
    Case("https with tls", me(tls={"sni": "api.together.xyz"})),
    Case("http with tls", me("http://203.0.113.10", tls={"sni": "x"}), "spec", MSG_TLS),
    Case("CA bundle in a Secret", me(tls={"caCertificateRef": {"kind": "Secret", "name": "corp-ca"}})),
    Case("CA bundle in another kind", me(tls={"caCertificateRef": {"kind": "ClusterTrustBundle", "name": "ca"}}),
         "spec.tls.caCertificateRef.kind", "ConfigMap"),
    # ModelCache.
    Case("hugging face source", mc()),
    Case("hugging face without block", mc(huggingFace=None), "spec.source", MSG_HF),
]

# Neocloud sources (Nebius, Vultr) and their class blocks: appended rows, built with edit() from the bases above.
NEBIUS_H200 = {"platform": "gpu-h200-sxm", "preset": "8gpu-128vcpu-1600gb", "driversPreset": "cuda12"}
VULTR_L40S = {"plan": "vcg-l40s-16c-180g-48vram"}
MSG_PATTERN = "should match"


def _cluster(doc: Doc, **blocks: Any) -> None:
    doc["spec"]["cluster"].update(blocks)


def _provisioning(doc: Doc, **blocks: Any) -> None:
    doc["spec"]["provisioning"] = blocks


CASES += [
    Case("Nebius without a block", ic("Nebius", ())),
    Case("Nebius with a block", edit(ic("Nebius", ()), lambda d: _cluster(d, nebius={
        "network": {"subnetId": "vpcsubnet-e00example"}, "systemNodeGroup": {"nodeCount": 3}}))),
    Case("GKE with a nebius block", edit(ic(), lambda d: _cluster(d, nebius={})), "spec.cluster", MSG_SOURCE),
    Case("Nebius with a gke block", ic("Nebius", ("gke",)), "spec.cluster", MSG_SOURCE),
    Case("Vultr with a block", edit(ic("Vultr", ()), lambda d: _cluster(d, vultr={"region": "ewr"}))),
    Case("Vultr without a block", ic("Vultr", ()), "spec.cluster", MSG_SOURCE),
    Case("Vultr with a nebius block", edit(ic("Vultr", ()), lambda d: _cluster(d, vultr={"region": "ewr"}, nebius={})),
         "spec.cluster", MSG_SOURCE),
    Case("Vultr region in capitals", edit(ic("Vultr", ()), lambda d: _cluster(d, vultr={"region": "EWR"})),
         "spec.cluster.vultr.region", MSG_PATTERN),
    Case("Vultr region with a digit", edit(ic("Vultr", ()), lambda d: _cluster(d, vultr={"region": "ewr1"})),
         "spec.cluster.vultr.region", MSG_PATTERN),
    Case("class for Nebius and Vultr", edit(icl(), lambda d: _provisioning(d, nebius=dict(NEBIUS_H200),
                                                                          vultr=dict(VULTR_L40S)))),
    Case("Nebius platform in capitals", edit(icl(), lambda d: _provisioning(d, nebius={**NEBIUS_H200,
                                                                                       "platform": "GPU_H200"})),
         "spec.provisioning.nebius.platform", MSG_PATTERN),
    Case("Nebius preset with a space", edit(icl(), lambda d: _provisioning(d, nebius={**NEBIUS_H200,
                                                                                      "preset": "8gpu 128vcpu"})),
         "spec.provisioning.nebius.preset", MSG_PATTERN),
    Case("Vultr plan with a dot", edit(icl(), lambda d: _provisioning(d, vultr={"plan": "vcg.l40s"})),
         "spec.provisioning.vultr.plan", MSG_PATTERN),
]
