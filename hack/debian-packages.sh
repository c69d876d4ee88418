#!/usr/bin/env bash
# Install the Debian packages a make target needs beyond the Python lock, when missing.
# Usage: hack/debian-packages.sh WHAT PROBE:PACKAGE...
#   WHAT     who needs them, for the message ("the docs", "the images")
#   PROBE    a command on PATH, or an absolute path that exists once PACKAGE is installed
# Installs what is missing when run as root (CI is); otherwise names the packages to install
# and fails. Not pinned: Debian's archive serves only the current build of a stable release's
# package (chromium moves with every security update), so a pinned version would stop
# installing within weeks. The versions a run used are printed.
set -euo pipefail
what=$1
shift
have() { case "$1" in /*) [ -e "$1" ] ;; *) command -v "$1" >/dev/null 2>&1 ;; esac; }
missing=()
for pair in "$@"; do
	have "${pair%%:*}" || missing+=("${pair##*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "::: $what need Debian packages: ${missing[*]} (as root: apt-get install ${missing[*]})" >&2
		exit 1
	fi
	echo "::: installing ${missing[*]} from Debian"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
for pair in "$@"; do
	pkg=${pair##*:}
	echo "::: $pkg $(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || echo '(not from dpkg)')"
done
