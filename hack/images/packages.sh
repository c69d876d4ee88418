#!/usr/bin/env bash
# The Debian packages `make images` and the image suites need beyond the Python lock:
#   mmdebstrap      the image's root filesystem, from Debian's archive (no Docker, no base image)
#   podman, runc    run the images: `podman system service` answers the Docker Engine API that
#                   `crossplane render` speaks, and the e2e package runtime starts functions with it.
#                   runc, not crun: crun 1.8 fails on hybrid cgroup hierarchies (cgroup v1 + a
#                   cgroup2 mount at /sys/fs/cgroup/unified), which this kind of machine has.
#   containernetworking-plugins, iptables
#                   podman's default bridge network with published ports (what render dials)
# Usage: hack/images/packages.sh (installing and printing: hack/debian-packages.sh).
set -euo pipefail
want=(mmdebstrap:mmdebstrap podman:podman runc:runc /usr/lib/cni/bridge:containernetworking-plugins iptables:iptables)
exec "$(dirname "$0")/../debian-packages.sh" "the images" "${want[@]}"
