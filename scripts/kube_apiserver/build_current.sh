#!/usr/bin/env bash
# Builds a current kube-apiserver (and kubectl) from the k8s.io/kubernetes Go
# module, and etcd from go.etcd.io/etcd/server/v3, with the machine's Go and
# the Go module proxy; caches them outside the repository next to the 1.20
# build. Idempotent: with everything cached it returns at once.
#
#   bash scripts/kube_apiserver/build_current.sh
#   KUBE_CURRENT_VERSION=1.36.3 bash ...   # another release (default 1.37.2)
#   KUBE_REFLECTOR_CACHE=/somewhere bash ... # default: ~/.cache/kube-reflector
#
# The recipe: a throwaway module in the cache that requires k8s.io/kubernetes
# at the release and pins every k8s.io staging module (which kubernetes's own
# go.mod points at local folders, ignored by a dependent module) to the
# matching v0.N.x with `replace`; then `go build` of cmd/kube-apiserver and
# cmd/kubectl. A cold build takes about 11 minutes on 2 cores (9 for
# kube-apiserver, most of it compiling; 1 for kubectl; 1 for etcd).
# kube-apiserver 1.31+ needs etcd >= 3.5.11: Debian's 3.4 is too old.
set -euo pipefail

VERSION="${KUBE_CURRENT_VERSION:-1.37.2}"
ETCD_VERSION="${KUBE_CURRENT_ETCD_VERSION:-3.6.16}"
CACHE="${KUBE_REFLECTOR_CACHE:-${HOME:-/root}/.cache/kube-reflector}"
BIN="$CACHE/kube-apiserver-$VERSION"
KUBECTL="$CACHE/kubectl-$VERSION"
ETCD="$CACHE/etcd-$ETCD_VERSION"
log() { echo "kube_apiserver/build_current: $*" >&2; }

if [[ -x "$BIN" && -x "$KUBECTL" && -x "$ETCD" ]]; then
  log "cached: $BIN, $KUBECTL, $ETCD"
  exit 0
fi

GO="$(command -v go || true)"
[[ -n "$GO" ]] || GO=/usr/local/go/bin/go
[[ -x "$GO" ]] || { log "no Go toolchain found (go on PATH or /usr/local/go/bin/go)"; exit 1; }
export GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
export GOMODCACHE="${GOMODCACHE:-$CACHE/gomodcache}" GOCACHE="${GOCACHE:-$CACHE/gocache}"
"$GO" version >&2
MINOR="${VERSION#*.}"; MINOR="${MINOR%%.*}"
STAGING="0.$MINOR.${VERSION##*.}"

# kube-apiserver and kubectl
if [[ ! -x "$BIN" || ! -x "$KUBECTL" ]]; then
  MOD="$CACHE/build-kubernetes-$VERSION"
  mkdir -p "$MOD"
  cd "$MOD"
  if [[ ! -f go.mod.done ]]; then
    log "resolving k8s.io/kubernetes v$VERSION (staging modules at v$STAGING)"
    "$GO" mod download -json "k8s.io/kubernetes@v$VERSION" >/dev/null
    upstream="$GOMODCACHE/cache/download/k8s.io/kubernetes/@v/v$VERSION.mod"
    godirective="$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$upstream" | head -1)"
    {
      echo "module kube-reflector-test-apiserver"
      echo
      echo "go $godirective"
      echo
      echo "require k8s.io/kubernetes v$VERSION"
      echo
      echo "replace ("
      grep -E '^\s+k8s\.io/[a-z0-9.-]+ => \./staging/src/' "$upstream" |
        awk -v v="v$STAGING" '{ print "\t" $1 " => " $1 " " v }'
      echo ")"
    } > go.mod
    "$GO" get "k8s.io/kubernetes/cmd/kube-apiserver@v$VERSION" "k8s.io/kubernetes/cmd/kubectl@v$VERSION" >&2
    touch go.mod.done
  fi
  V=k8s.io/component-base/version
  LDFLAGS="-s -w -X $V.gitVersion=v$VERSION -X $V.gitMajor=1 -X $V.gitMinor=$MINOR -X $V.gitTreeState=clean"
  if [[ ! -x "$BIN" ]]; then
    log "go build k8s.io/kubernetes/cmd/kube-apiserver v$VERSION (about 9 minutes on 2 cores, cold)"
    "$GO" build -o "$BIN.tmp" -ldflags "$LDFLAGS" k8s.io/kubernetes/cmd/kube-apiserver
    mv "$BIN.tmp" "$BIN"
  fi
  if [[ ! -x "$KUBECTL" ]]; then
    log "go build k8s.io/kubernetes/cmd/kubectl v$VERSION"
    "$GO" build -o "$KUBECTL.tmp" -ldflags "$LDFLAGS" k8s.io/kubernetes/cmd/kubectl
    mv "$KUBECTL.tmp" "$KUBECTL"
  fi
fi

# etcd
if [[ ! -x "$ETCD" ]]; then
  MOD="$CACHE/build-etcd-$ETCD_VERSION"
  mkdir -p "$MOD"
  cd "$MOD"
  if [[ ! -f go.mod.done ]]; then
    printf 'module kube-reflector-test-etcd\n\ngo 1.24\n' > go.mod
    "$GO" get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >&2
    touch go.mod.done
  fi
  log "go build go.etcd.io/etcd/server/v3 v$ETCD_VERSION"
  "$GO" build -o "$ETCD.tmp" -ldflags "-s -w" go.etcd.io/etcd/server/v3
  mv "$ETCD.tmp" "$ETCD"
fi

"$BIN" --version >&2
"$KUBECTL" version --client >&2 || true
"$ETCD" --version >&2
log "built $BIN, $KUBECTL, $ETCD"
