#!/usr/bin/env bash
# The Debian packages the documentation needs beyond the Python lock:
#   graphviz        `dot` renders docs/diagrams/*.dot at build time (make docs)
#   chromium, chromium-driver
#                   the headless browser that opens the built site (make docs-test); Debian's
#                   own build, never a browser a test tool downloads
# Usage: hack/docs-packages.sh build|test. Installs what is missing when run as root (CI is);
# otherwise names the packages to install and fails.
#
# Not pinned to a version: Debian's archive serves only the current build of a stable
# release's package (chromium moves with every security update), so a pinned version
# would stop installing within weeks. The versions a run used are printed.
set -euo pipefail
case "${1:-}" in
	build) want=(dot:graphviz) ;;
	test) want=(dot:graphviz chromium:chromium chromedriver:chromium-driver) ;;
	*) echo "usage: $0 build|test" >&2; exit 2 ;;
esac
missing=()
for pair in "${want[@]}"; do
	command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair##*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "::: the docs need Debian packages: ${missing[*]} (as root: apt-get install ${missing[*]})" >&2
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
