#!/usr/bin/env bash
# Build Traefik (github.com/traefik/traefik/v3, cmd/traefik) from the Go module proxy, patched so
# that it builds from what this proxy serves. Called by hack/tools.sh (`hack/tools.sh traefik`).
#
#   build.sh OUT LDFLAGS   build the binary into OUT (with -trimpath -ldflags LDFLAGS, -mod=readonly)
#   build.sh --lock        re-resolve go.mod/go.sum beside this script (network; after a version bump)
#
# Nothing third-party is in the repository: Traefik's and lego's sources come from the proxy at
# build time (`go mod download`, checked against the sums below and the checksum database) and are
# copied into a work dir under the tools cache, $MODELPLANE_TOOLS_DIR/.work-traefik/, where the
# edits below are applied. The edits are ours: a few sed expressions and two small Go files
# written here. Why (hack/tools/README.md, "Traefik", says more):
#
#   - Upstream's go.mod replaces github.com/abbot/go-http-auth and github.com/gorilla/mux with
#     containous forks, which the proxy refuses (403). Our go.mod uses abbot v0.4.0 and gorilla
#     v1.8.1; four call sites use fork-only API, none on the Gateway API path:
#       basic auth   goauth.CheckSecret        -> checkSecretV040 (same check, via abbot's CheckAuth)
#       digest auth  RequireAuthStale(w, r)    -> RequireAuth(w, r) (no "stale" hint in the challenge)
#       muxer        mux.RoutingPathKey        -> a context key of our own (same value, same readers)
#       v2 matchers  mux.NewRouter().UseRoutingPath() -> mux.NewRouter() (Path/PathPrefix in the
#                    v2 rule syntax match req.URL.Path instead of the partly decoded routing path;
#                    the Gateway API provider writes v3 rules, which keep the routing path)
#   - lego v5 (ACME; the version Traefik requires) lists 13 DNS providers whose SDKs the proxy
#     refuses; its provider table (providers/dns/zz_gen_dns_providers.go) loses those 13 imports
#     and cases (asking for one of them is then "unrecognized DNS provider").
#   - Traefik imports its nested module github.com/traefik/traefik/dynamic/ext
#     (pkg/config/dynamic/ext), which a module zip never contains; upstream's holds empty types,
#     and so does the one written here.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache="${MODELPLANE_TOOLS_DIR:-$HOME/.cache/modelplane/tools}"
die() { echo "hack/tools/traefik/build.sh: $*" >&2; exit 1; }

# The module zips the patches apply to (go mod download prints these; a different zip is refused).
traefik_sum="h1:T8wy9KuaFzCkmXCqAzDy7t73pBDR1DHrJe3pqXpNXTw="
lego_sum="h1:Jt6xAP9xQrJ3SLLGgxejfDDd3pzdrmuLCWe4oTqHHQc="
# The DNS providers lego keeps out (their SDKs are refused by the proxy).
dropped_dns="alidns aliesa azion dnsimple edgedns edgeone huaweicloud oraclecloud regfish sakuracloud tencentcloud ucloud yandexcloud"

export GOTOOLCHAIN=local CGO_ENABLED=0 GOWORK=off
mode=build
if [ "${1:-}" = "--lock" ]; then mode=lock; else
	[ $# -ge 1 ] || die "usage: build.sh OUT [LDFLAGS] | build.sh --lock"
	out=$1 ldflags=${2:-}
fi

tv=$(awk '$1=="require" && $2=="github.com/traefik/traefik/v3" {print $3; exit} $1=="github.com/traefik/traefik/v3" && $2 ~ /^v/ {print $2; exit}' "$here/go.mod")
[ -n "$tv" ] || die "go.mod pins no version of github.com/traefik/traefik/v3."

work="$cache/.work-traefik"
rm -rf "$work"; mkdir -p "$work/dl"

# `go mod download -json M@V` outside any module; prints the Dir, checks the zip's sum.
fetch() {
	local json dir sum
	json=$(cd "$work/dl" && GOFLAGS= go mod download -json "$1@$2" 2>"$work/dl/stderr") ||
		die "go mod download $1@$2 failed (is the Go module proxy reachable?): $(sed -n 's/^\t"Error": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")$(head -1 "$work/dl/stderr")"
	dir=$(sed -n 's/^\t"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")
	sum=$(sed -n 's/^\t"Sum": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")
	[ -d "$dir" ] || die "go mod download $1@$2 gave no source directory."
	[ "$sum" = "$3" ] ||
		die "$1@$2 has sum $sum, build.sh expects $3 (a new version needs new patches and sums)."
	echo "$dir"
}

# Copy a module's source out of the (read-only) module cache.
copy() { cp -R "$1" "$2"; chmod -R u+w "$2"; }

# sed -i EXPR on FILE, refusing to go on when PATTERN (what EXPR changes) is not in FILE first or
# still is afterwards: an upstream change must fail the build, not slip through unpatched.
edit() {
	local file=$1 pattern=$2 expr=$3
	grep -q -- "$pattern" "$file" || die "patch: '$pattern' not found in ${file#"$work"/}."
	sed -i -e "$expr" "$file"
	! grep -q -- "$pattern" "$file" || die "patch: '$pattern' still in ${file#"$work"/}."
}

# 1. Traefik.
src=$(fetch github.com/traefik/traefik/v3 "$tv" "$traefik_sum")
copy "$src" "$work/traefik"
lv=$(awk '$1=="github.com/go-acme/lego/v5" {print $2; exit} $1=="require" && $2=="github.com/go-acme/lego/v5" {print $3; exit}' "$work/traefik/go.mod")
[ -n "$lv" ] || die "Traefik $tv's go.mod requires no github.com/go-acme/lego/v5."
auth="$work/traefik/pkg/middlewares/auth"
edit "$auth/basic_auth.go" 'goauth\.CheckSecret' 's/goauth\.CheckSecret/checkSecretV040/'
cat >"$auth/zz_modelplane_checksecret.go" <<'EOF'
package auth

// Written by modelplane's hack/tools/traefik/build.sh: go-http-auth v0.4.0 has no CheckSecret
// (the containous fork's), so check a password against a secret through BasicAuth.CheckAuth,
// which applies the same MD5-crypt, {SHA} and bcrypt comparisons.

import (
	"encoding/base64"
	"net/http"

	goauth "github.com/abbot/go-http-auth"
)

func checkSecretV040(password, secret string) bool {
	a := &goauth.BasicAuth{Secrets: func(string, string) string { return secret }}
	r := &http.Request{Header: http.Header{}}
	r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("user:"+password)))
	return a.CheckAuth(r) != ""
}
EOF
edit "$auth/digest_auth.go" 'RequireAuthStale' 's/RequireAuthStale(/RequireAuth(/'
mux="$work/traefik/pkg/muxer/http"
edit "$mux/mux.go" 'mux\.RoutingPathKey' 's/mux\.RoutingPathKey/routingPathKey/; /^\t"github\.com\/gorilla\/mux"$/d'
cat >"$mux/zz_modelplane_routingpath.go" <<'EOF'
package http

// Written by modelplane's hack/tools/traefik/build.sh: gorilla/mux v1.8.1 has no RoutingPathKey
// (the containous fork's), so the routing path travels under a context key of this package.

type routingPathKeyType struct{}

var routingPathKey = routingPathKeyType{}
EOF
edit "$mux/matcher_v2.go" 'UseRoutingPath()' 's/\.UseRoutingPath()//'

# 2. lego v5, without the DNS providers whose SDKs the proxy refuses.
src=$(fetch github.com/go-acme/lego/v5 "$lv" "$lego_sum")
copy "$src" "$work/lego"
table="$work/lego/providers/dns/zz_gen_dns_providers.go"
for p in $dropped_dns; do
	edit "$table" "/providers/dns/$p\"" "/\/providers\/dns\/$p\"\$/d; /^\tcase \"$p\"\(, \"[a-z0-9]*\"\)*:\$/{N;d}"
	! grep -q "\b$p\.NewDNSProvider" "$table" || die "patch: $p is still in lego's DNS provider table."
done

# 3. The nested module Traefik expects at pkg/config/dynamic/ext.
mkdir -p "$work/ext"
printf 'module github.com/traefik/traefik/dynamic/ext\n\ngo 1.24.0\n' >"$work/ext/go.mod"
cat >"$work/ext/ext.go" <<'EOF'
// Package ext: written by modelplane's hack/tools/traefik/build.sh in place of Traefik's nested
// module (not in its module zip); the types are empty extension points, as upstream's are.
package ext

// HTTP is a dynamic.HTTP extension.
type HTTP struct{}

// Router is a dynamic.Router extension.
type Router struct{}
EOF

# 4. Our module (go.mod/go.sum: the lock) beside the three trees, and the build.
cp "$here/go.mod" "$work/go.mod"
[ -f "$here/go.sum" ] && cp "$here/go.sum" "$work/go.sum"
cd "$work"
if [ $mode = lock ]; then
	GOFLAGS=-mod=mod go mod tidy
	cp go.mod go.sum "$here/"
	cd /; rm -rf "$work"
	echo "hack/tools/traefik: go.mod and go.sum updated (traefik $tv, lego $lv)."
	exit 0
fi
GOFLAGS="-mod=readonly -buildvcs=false" go build -trimpath -ldflags "$ldflags" -o "$out" github.com/traefik/traefik/v3/cmd/traefik
cd /; rm -rf "$work"
