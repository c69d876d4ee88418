"""The VPC an EKS cluster gets when ``eks.subnetIds`` is omitted.

One VPC, and per availability zone a public and a private subnet; an
internet gateway and a public route table for the public subnets; one NAT
gateway (with its Elastic IP) in the first zone's public subnet and a private
route table that sends the private subnets' traffic through it. Node groups
run in the private subnets; load balancers find their subnets by the tags
EKS documents (``kubernetes.io/role/elb`` public, ``.../internal-elb``
private, ``kubernetes.io/cluster/<name>: shared`` on both).

Zones: the node pools' ``zones``, else the region's first three. Modelplane
does not ask AWS which zones exist, so "first three" is a fixed table: the
zone names ``<region>a``, ``<region>b``, ``<region>c``, except where a
region is known to lack one of those letters (``FIRST_ZONES``). EKS needs
subnets in two zones, so pools that name one zone get the first of the
region's defaults added.

Addresses: the zone's letter picks a fixed slot, so a subnet keeps its range
when zones come or go. The first half of the VPC holds eight private slots
(a to h), the third quarter eight public ones, and the last quarter stays
free. A /16 gives /20 private (4,091 usable addresses: the VPC CNI gives
pods VPC addresses) and /21 public subnets.
"""
from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from modelplane.errors import InputError
from modelplane.platform.clouds import NETWORK_PREFIX, Target
from modelplane.platform.common import cluster_provider_config, meta, network_cidr

EC2_API = "ec2.aws.m.upbound.io/v1beta1"
DEFAULT_CIDR = "10.0.0.0/16"
SLOTS = "abcdefgh"                 # zone letter -> address slot
# VPC prefixes whose smallest (public) subnet is still one AWS accepts (/28).
MIN_PREFIX, MAX_PREFIX = 16, 23
# Regions whose first three zone letters are not a, b, c.
FIRST_ZONES: Mapping[str, str] = {"ap-northeast-1": "acd"}
ANYWHERE = "0.0.0.0/0"

VPC_KEY = NETWORK_PREFIX + "vpc"
IGW_KEY = NETWORK_PREFIX + "internetgateway"
EIP_KEY = NETWORK_PREFIX + "eip-nat"
NAT_KEY = NETWORK_PREFIX + "natgateway"


def composes(t: Target) -> bool:
    """True when Modelplane composes the VPC (no subnetIds given)."""
    return not t.block.get("subnetIds")


def _letter(region: str, zone: str, field: str) -> str:
    letter = zone[len(region):] if zone.startswith(region) else ""
    if len(letter) != 1 or letter not in SLOTS:
        raise InputError(field, f"{zone!r} is not an availability zone of {region} Modelplane can lay out a subnet "
                                f"for; write {region}a to {region}{SLOTS[-1]}, or give eks.subnetIds")
    return letter


def zones(t: Target) -> list[str]:
    """The zones that get a public and a private subnet, sorted."""
    region = t.block["region"]
    picked: set[str] = set()
    for i, p in enumerate(t.node_pools):
        for j, zone in enumerate(p.get("zones") or ()):
            _letter(region, zone, f"spec.nodePools[{i}].zones[{j}]")
            picked.add(zone)
    defaults = [region + letter for letter in FIRST_ZONES.get(region, "abc")]
    if not picked:
        return defaults
    for zone in defaults:
        if len(picked) >= 2:
            break
        picked.add(zone)
    return sorted(picked)


def _ranges(t: Target) -> tuple[ipaddress.IPv4Network, list[ipaddress.IPv4Network], list[ipaddress.IPv4Network]]:
    """(VPC range, private slots, public slots), eight slots each."""
    net = network_cidr(t.block, t.block_field, DEFAULT_CIDR, (MIN_PREFIX, MAX_PREFIX),
                       " (AWS allows /16 VPCs at most, and the smallest subnet it takes is a /28)")
    p = net.prefixlen
    private = list(next(net.subnets(new_prefix=p + 1)).subnets(new_prefix=p + 4))
    public = list(list(net.subnets(new_prefix=p + 2))[2].subnets(new_prefix=p + 5))
    return net, private, public


def subnet_key(tier: str, zone: str) -> str:
    return f"{NETWORK_PREFIX}subnet-{tier}-{zone}"


def _resource(t: Target, kind: str, key_parts: tuple[str, ...], fp: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": EC2_API, "kind": kind,
        "metadata": meta(t.key_name(*key_parts), t.labels),
        "spec": {"forProvider": {"region": t.block["region"], **fp},
                 "providerConfigRef": cluster_provider_config(t.cloud_provider_config)},
    }


def _tags(t: Target, name: str, **extra: str) -> dict[str, str]:
    return dict(sorted({"Name": name, f"kubernetes.io/cluster/{t.key_name()}": "shared", **extra}.items()))


def infra(t: Target) -> dict[str, dict]:
    """composition-resource-name -> network resource ({} when subnetIds are given)."""
    if not composes(t):
        return {}
    region = t.block["region"]
    net, private, public = _ranges(t)
    vpc_name, igw_name = t.key_name("vpc"), t.key_name("igw")
    vpc_ref = {"name": vpc_name}
    out: dict[str, dict] = {
        VPC_KEY: _resource(t, "VPC", ("vpc",), {
            "cidrBlock": str(net),
            "enableDnsHostnames": True, "enableDnsSupport": True, "tags": _tags(t, vpc_name)}),
        IGW_KEY: _resource(t, "InternetGateway", ("igw",), {"vpcIdRef": vpc_ref, "tags": _tags(t, igw_name)}),
    }
    for tier, ranges, role in (("public", public, "kubernetes.io/role/elb"),
                               ("private", private, "kubernetes.io/role/internal-elb")):
        table = t.key_name(tier)
        out[f"{NETWORK_PREFIX}routetable-{tier}"] = _resource(t, "RouteTable", (tier,), {
            "vpcIdRef": vpc_ref, "tags": _tags(t, table)})
        for zone in zones(t):
            name = t.key_name(tier, zone)
            fp: dict[str, Any] = {
                "vpcIdRef": vpc_ref, "availabilityZone": zone,
                "cidrBlock": str(ranges[SLOTS.index(zone[len(region):])]),
                "tags": _tags(t, name, **{role: "1"}),
            }
            if tier == "public":
                fp["mapPublicIpOnLaunch"] = True
            out[subnet_key(tier, zone)] = _resource(t, "Subnet", (tier, zone), fp)
            out[f"{NETWORK_PREFIX}rta-{tier}-{zone}"] = _resource(t, "RouteTableAssociation", ("rta", tier, zone), {
                "routeTableIdRef": {"name": table}, "subnetIdRef": {"name": name}})
    first = zones(t)[0]
    out[EIP_KEY] = _resource(t, "EIP", ("nat", "eip"), {"domain": "vpc", "tags": _tags(t, t.key_name("nat", "eip"))})
    out[NAT_KEY] = _resource(t, "NATGateway", ("nat",), {
        "connectivityType": "public", "allocationIdRef": {"name": t.key_name("nat", "eip")},
        "subnetIdRef": {"name": t.key_name("public", first)}, "tags": _tags(t, t.key_name("nat"))})
    out[f"{NETWORK_PREFIX}route-public-internet"] = _resource(t, "Route", ("public", "internet"), {
        "routeTableIdRef": {"name": t.key_name("public")}, "destinationCidrBlock": ANYWHERE,
        "gatewayIdRef": {"name": igw_name}})
    out[f"{NETWORK_PREFIX}route-private-nat"] = _resource(t, "Route", ("private", "nat"), {
        "routeTableIdRef": {"name": t.key_name("private")}, "destinationCidrBlock": ANYWHERE,
        "natGatewayIdRef": {"name": t.key_name("nat")}})
    return out


def cluster_subnets(t: Target) -> dict[str, Any]:
    """The EKS Cluster's vpcConfig subnets: the given IDs, or refs to every composed subnet."""
    if not composes(t):
        return {"subnetIds": list(t.block["subnetIds"])}
    return {"subnetIdRefs": [{"name": t.key_name(tier, z)} for tier in ("private", "public") for z in zones(t)]}


def pool_subnets(t: Target, pool_zones: tuple[str, ...]) -> dict[str, Any]:
    """A node group's subnets: the private subnets of its zones (all of them when it names none)."""
    if not composes(t):
        return {"subnetIds": list(t.block["subnetIds"])}
    return {"subnetIdRefs": [{"name": t.key_name("private", z)} for z in (sorted(pool_zones) or zones(t))]}


def deletion_order(t: Target) -> list[tuple[str, str]]:
    """The NAT gateway's Elastic IP keeps the internet gateway attached until the NAT gateway is gone."""
    return [(NAT_KEY, IGW_KEY)] if composes(t) else []
