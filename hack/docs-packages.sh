#!/usr/bin/env bash
# The Debian packages the documentation needs beyond the Python lock:
#   graphviz        `dot` renders docs/diagrams/*.dot at build time (make docs)
#   chromium, chromium-driver
#                   the headless browser that opens the built site (make docs-test); Debian's
#                   own build, never a browser a test tool downloads
# Usage: hack/docs-packages.sh build|test (installing and printing: hack/debian-packages.sh).
set -euo pipefail
case "${1:-}" in
	build) want=(dot:graphviz) ;;
	test) want=(dot:graphviz chromium:chromium chromedriver:chromium-driver) ;;
	*) echo "usage: $0 build|test" >&2; exit 2 ;;
esac
exec "$(dirname "$0")/debian-packages.sh" "the docs" "${want[@]}"
