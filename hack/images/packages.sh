#!/usr/bin/env bash
# The Debian packages `make images` and the image suites need beyond the Python lock:
#   mmdebstrap      the image's root filesystem, from Debian's archive (no Docker, no base image)
#   podman, runc    run the images: `podman system service` answers the Docker Engine API that
#                   `crossplane render` speaks, and the e2e package runtime starts functions with it.
#                   runc, not crun: crun 1.8 fails on hybrid cgroup hierarchies (cgroup v1 + a
#                   cgroup2 mount at /sys/fs/cgroup/unified), which this kind of machine has.
#   containernetworking-plugins, iptables
#                   podman's default bridge network with published ports (what render dials)
# Usage: hack/images/packages.sh. Installs what is missing when run as root (CI is); otherwise
# names the packages to install and fails. Not pinned (Debian's archive serves only a stable
# release's current build); the versions a run used are printed.
set -euo pipefail
want=(mmdebstrap:mmdebstrap podman:podman runc:runc /usr/lib/cni/bridge:containernetworking-plugins iptables:iptables)
have() { case "$1" in /*) [ -e "$1" ] ;; *) command -v "$1" >/dev/null 2>&1 ;; esac; }
missing=()
for pair in "${want[@]}"; do
	have "${pair%%:*}" || missing+=("${pair##*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "::: the images need Debian packages: ${missing[*]} (as root: apt-get install ${missing[*]})" >&2
		exit 1
	fi
	echo "::: installing ${missing[*]} from Debian"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
for pair in "${want[@]}"; do
	pkg=${pair##*:}
	echo "::: $pkg $(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || echo '(not from dpkg)')"
done
