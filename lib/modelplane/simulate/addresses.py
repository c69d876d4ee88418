"""Load-balancer addresses for a simulated fleet: deterministic and without a ceiling.

Addresses are handed out in order of first request, one per key, from ranges
reserved for documentation and benchmarks, so no simulated address is ever
routable:

1. 203.0.113.10 - 203.0.113.254 (TEST-NET-3, RFC 5737): a small fleet's
   addresses read like the examples in the docs;
2. 198.18.0.1 - 198.19.255.254 (RFC 2544 benchmarking, 198.18.0.0/15):
   131,070 more;
3. then 2001:db8::/32 (IPv6 documentation, RFC 3849), which does not run out.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

_TEST_NET = (int(ipaddress.IPv4Address("203.0.113.10")), int(ipaddress.IPv4Address("203.0.113.254")))
_BENCHMARK = (int(ipaddress.IPv4Address("198.18.0.1")), int(ipaddress.IPv4Address("198.19.255.254")))
_IPV6 = int(ipaddress.IPv6Address("2001:db8::1"))


def nth(n: int) -> str:
    """The ``n``-th address (0-based) of the sequence above."""
    for low, high in (_TEST_NET, _BENCHMARK):
        size = high - low + 1
        if n < size:
            return str(ipaddress.IPv4Address(low + n))
        n -= size
    return str(ipaddress.IPv6Address(_IPV6 + n))


@dataclass
class AddressBook:
    """One address per key, stable within a run."""

    assigned: dict[str, str] = field(default_factory=dict)

    def address(self, key: str) -> str:
        if key not in self.assigned:
            self.assigned[key] = nth(len(self.assigned))
        return self.assigned[key]
