#!/usr/bin/env bash
# Build the pinned upstream programs (hack/tools/**/go.mod) into a cache outside
# the repository, reuse what is already there, and write a manifest for Python:
#
#   ${MODELPLANE_TOOLS_DIR:-$HOME/.cache/modelplane/tools}/<name>-<version>/<name>
#   ${MODELPLANE_TOOLS_DIR:-$HOME/.cache/modelplane/tools}/tools.json   {"<name>": "<absolute path>", ...}
#
# Usage: hack/tools.sh [--check] [NAME|GROUP...]   (none: every tool; NAME and GROUP as listed below)
#   GROUP: judges (what every Go suite needs), lab (the lab's clusters and data plane),
#          control-plane (Crossplane core and the providers). make tools-GROUP builds one group,
#          so .ci/run can start the suites a group serves before the next group is built.
#   --check: build nothing; exit 0 if every wanted tool is cached (fingerprint included), 3 if not.
# Environment: MODELPLANE_TOOLS_DIR (cache), MODELPLANE_TOOLS_JOBS (parallel builds, default 1:
# with 2 cores one go build already keeps both busy).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mods="$root/tools"
cache="${MODELPLANE_TOOLS_DIR:-$HOME/.cache/modelplane/tools}"
jobs="${MODELPLANE_TOOLS_JOBS:-1}"

k8s_x='-X k8s.io/component-base/version.gitVersion=v$V -X k8s.io/component-base/version.gitMajor=$MAJ -X k8s.io/component-base/version.gitMinor=$MIN -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=v$V -X k8s.io/client-go/pkg/version.gitMajor=$MAJ -X k8s.io/client-go/pkg/version.gitMinor=$MIN -X k8s.io/client-go/pkg/version.gitTreeState=clean'
xp_x='-X github.com/crossplane/crossplane/v2/internal/version.version=v$V -X github.com/crossplane/crossplane-runtime/v2/pkg/version.version=v$V'

# The providers have no flag for controller-runtime's metrics address and both take :8080, so two
# on one host collide (docs/e2e-crossplane.md); the default lives in a variable: switch it off.
metrics_off='-X sigs.k8s.io/controller-runtime/pkg/metrics/server.DefaultBindAddress=0'

# name | module dir under hack/tools | pinned module (its version names the cache dir) | main package | extra -ldflags
# The name is also the binary's name. Order = build order (most wanted first).
table="
crossplane|crossplane|github.com/crossplane/crossplane/v2|github.com/crossplane/crossplane/v2/cmd/crank|$xp_x
etcd|etcd|go.etcd.io/etcd/server/v3|go.etcd.io/etcd/server/v3|
kube-apiserver|.|k8s.io/kubernetes|k8s.io/kubernetes/cmd/kube-apiserver|$k8s_x
kubectl|.|k8s.io/kubernetes|k8s.io/kubernetes/cmd/kubectl|$k8s_x
kube-controller-manager|.|k8s.io/kubernetes|k8s.io/kubernetes/cmd/kube-controller-manager|$k8s_x
kube-scheduler|.|k8s.io/kubernetes|k8s.io/kubernetes/cmd/kube-scheduler|$k8s_x
kwok|kwok|sigs.k8s.io/kwok|sigs.k8s.io/kwok/cmd/kwok|
crossplane-core|crossplane-core|github.com/crossplane/crossplane/v2|github.com/crossplane/crossplane/v2/cmd/crossplane|$xp_x
provider-kubernetes|provider-kubernetes|github.com/crossplane-contrib/provider-kubernetes|github.com/crossplane-contrib/provider-kubernetes/cmd/provider|-X github.com/crossplane-contrib/provider-kubernetes/internal/version.Version=v\$V $metrics_off
provider-helm|provider-helm|github.com/crossplane-contrib/provider-helm|github.com/crossplane-contrib/provider-helm/cmd/provider|-X github.com/crossplane-contrib/provider-helm/pkg/version.Version=v\$V $metrics_off
lws|lws|sigs.k8s.io/lws|sigs.k8s.io/lws/cmd|-X sigs.k8s.io/lws/pkg/version.GitVersion=v\$V
traefik|traefik|github.com/traefik/traefik/v3|github.com/traefik/traefik/v3/cmd/traefik|-X github.com/traefik/traefik/v3/pkg/version.Version=v\$V
"
# A module dir with a build.sh (traefik) is built by that script, not by `go build` in the dir:
# `build.sh OUT LDFLAGS`. traefik's patches its upstream source (fetched from the module proxy at
# build time into the cache, never into the repository) so it builds from what the proxy serves;
# see hack/tools/README.md, "Traefik".

# group | its tools, in build order. Every tool is in exactly one group (tests/upstream/test_tools.py
# checks): a suite needs the groups of the programs it runs (.ci/run says which).
groups="
judges|crossplane etcd kube-apiserver kubectl
lab|kube-controller-manager kube-scheduler kwok lws traefik
control-plane|crossplane-core provider-kubernetes provider-helm
"

die() { echo "hack/tools.sh: $*" >&2; exit 1; }

# The version a module pins for `mod` (from its go.mod: no go command, no network).
pinned() { awk -v m="$2" '$1==m {print $2; exit} $1=="require" && $2==m {print $3; exit}' "$mods/$1/go.mod"; }

# A fingerprint of what a build depends on besides the version: the module's go.mod/go.sum
# (and build.sh, if any) and this tool's row. A changed fingerprint rebuilds into the same
# <name>-<version> dir.
stamp() {
	cat "$mods/$1/go.mod" "$mods/$1/go.sum"
	if [ -f "$mods/$1/build.sh" ]; then cat "$mods/$1/build.sh"; fi
	echo "$2"
}
fingerprint() { stamp "$1" "$2" | sha256sum | cut -d' ' -f1; }

names=() ; declare -A row=()
while IFS='|' read -r n d m p x; do
	[ -n "$n" ] || continue
	names+=("$n"); row[$n]="$d|$m|$p|$x"
done <<<"$table"

gnames=() ; declare -A group=()
while IFS='|' read -r g members; do
	[ -n "$g" ] || continue
	gnames+=("$g"); group[$g]=$members
done <<<"$groups"

check=0 want=()
for n in "$@"; do
	case "$n" in
	-h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; echo "Tools: ${names[*]}"; echo "Groups: ${gnames[*]}"; exit 0;;
	--check) check=1;;
	*)
		if [ -n "${group[$n]:-}" ]; then
			read -r -a members <<<"${group[$n]}"; want+=("${members[@]}")
		elif [ -n "${row[$n]:-}" ]; then
			want+=("$n")
		else
			die "unknown tool or group '$n' (tools: ${names[*]}; groups: ${gnames[*]})."
		fi;;
	esac
done
[ ${#want[@]} -gt 0 ] || want=("${names[@]}")

# Which of the wanted tools need a build?
todo=()
for n in "${want[@]}"; do
	IFS='|' read -r d m p x <<<"${row[$n]}"
	v=$(pinned "$d" "$m"); v=${v#v}
	[ -n "$v" ] || die "hack/tools/$d/go.mod pins no version of $m."
	out="$cache/$n-v$v"
	if [ -x "$out/$n" ] && [ "$(cat "$out/.fingerprint" 2>/dev/null)" = "$(fingerprint "$d" "${row[$n]}")" ]; then
		echo "$n v$v: cached"
	else
		todo+=("$n")
	fi
done

if [ "$check" = 1 ]; then
	[ ${#todo[@]} -eq 0 ] || { echo "not cached: ${todo[*]}"; exit 3; }
	exit 0
fi

if [ ${#todo[@]} -gt 0 ]; then
	command -v go >/dev/null 2>&1 || die "Go is not installed (these tools need the go command, 1.26 or newer, on PATH)."
	export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly -buildvcs=false"
	have=$(go env GOVERSION); have=${have#go}
	for n in "${todo[@]}"; do
		IFS='|' read -r d m p x <<<"${row[$n]}"
		need=$(awk '$1=="go" {print $2; exit}' "$mods/$d/go.mod")
		[ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" = "$need" ] ||
			die "Go $have is too old: hack/tools/$d/go.mod needs Go $need or newer."
	done
	mkdir -p "$cache/.logs"
	# One look at the proxy (only for modules not yet in the module cache): fail early and clearly.
	for n in "${todo[@]}"; do
		IFS='|' read -r d m p x <<<"${row[$n]}"
		log="$cache/.logs/download-$n.log"
		if [ -f "$mods/$d/build.sh" ]; then
			# Its go.mod replaces $m with a dir build.sh makes: ask for the pinned version outside it.
			v=$(pinned "$d" "$m")
			(cd "$cache/.logs" && GOFLAGS= go mod download "$m@$v") >"$log" 2>&1 && continue
		else
			(cd "$mods/$d" && go mod download "$m") >"$log" 2>&1 && continue
		fi
		grep -qiE 'dial tcp|no such host|connection refused|i/o timeout|proxyconnect|TLS handshake|network is unreachable|403 Forbidden|404 Not Found' "$log" &&
			die "the Go module proxy ($(go env GOPROXY)) is unreachable or does not serve $m, so $n cannot be built (details: $log)."
		die "go mod download $m failed for $n: $(head -1 "$log")"
	done
fi

# The CPU seconds (user + system) the shell's finished children have used so far, from bash's
# `times`: a build's wall time depends on what else the machine runs, its CPU time much less, so
# the line reports both (the figures in .ci/suite-times.tsv are judged against them).
# Sets cpu_now; runs in the calling shell (a command substitution would be a new process, whose
# children have used nothing yet).
cpu_now=0
child_cpu() {
	local f
	f=$(mktemp)
	times >"$f"
	cpu_now=$(awk 'function sec(t,  m) { m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t); sub(/s$/, "", t); return m * 60 + t }
		NR == 2 { printf "%d", sec($1) + sec($2) }' "$f")
	rm -f "$f"
}

# Build one tool; prints its one line. Runs in a subshell (possibly in the background).
build() {
	local n=$1 d m p x v out log tmp start cpu
	IFS='|' read -r d m p x <<<"${row[$n]}"
	v=$(pinned "$d" "$m"); v=${v#v}
	out="$cache/$n-v$v"; log="$cache/.logs/$n-v$v.log"
	start=$SECONDS
	child_cpu; cpu=$cpu_now
	# Expand $V/$MAJ/$MIN in the -X flags (v1.35.4 -> V=1.35.4 MAJ=1 MIN=35).
	local V=$v MAJ=${v%%.*} MIN=${v#*.}; MIN=${MIN%%.*}
	x=$(V=$V MAJ=$MAJ MIN=$MIN; eval "echo \"$x\"")
	tmp=$(mktemp -d "$cache/.build-$n.XXXXXX")
	if [ -f "$mods/$d/build.sh" ]; then
		set -- bash "$mods/$d/build.sh" "$tmp/$n" "-s -w $x"
	else
		set -- go build -trimpath -ldflags "-s -w $x" -o "$tmp/$n" "$p"
	fi
	if ! (cd "$mods/$d" && "$@") >"$log" 2>&1; then
		rm -rf "$tmp"
		echo "$n v$v: FAILED (log: $log)"
		tail -20 "$log" >&2
		return 1
	fi
	fingerprint "$d" "${row[$n]}" >"$tmp/.fingerprint"
	chmod 755 "$tmp"
	rm -rf "$out"; mv "$tmp" "$out"
	child_cpu
	echo "$n v$v: built in $((SECONDS - start)) s (CPU $((cpu_now - cpu)) s)"
}

fail=0
if [ ${#todo[@]} -gt 0 ]; then
	if [ "$jobs" -le 1 ]; then
		for n in "${todo[@]}"; do build "$n" || fail=1; done
	else
		running=0
		for n in "${todo[@]}"; do
			if [ $running -ge "$jobs" ]; then wait -n || fail=1; running=$((running - 1)); fi
			build "$n" & running=$((running + 1))
		done
		while [ $running -gt 0 ]; do wait -n || fail=1; running=$((running - 1)); done
	fi
fi

# The manifest lists every tool whose pinned build is in the cache (not only the ones asked for).
mkdir -p "$cache"
manifest="$cache/tools.json"; tmp=$(mktemp "$cache/.tools.json.XXXXXX")
{
	echo "{"; sep=""
	for n in "${names[@]}"; do
		IFS='|' read -r d m p x <<<"${row[$n]}"
		v=$(pinned "$d" "$m"); bin="$cache/$n-v${v#v}/$n"
		[ -x "$bin" ] || continue
		bin=$(cd "$(dirname "$bin")" && pwd -P)/$n
		bin=${bin//\\/\\\\}; bin=${bin//\"/\\\"}
		printf '%s  "%s": "%s"' "$sep" "$n" "$bin"; sep=$',\n'
	done
	printf '\n}\n'
} >"$tmp"
mv "$tmp" "$manifest"
exit $fail
