#!/usr/bin/env bash
# Builds kube-apiserver 1.20.2 from Debian's `kubernetes` source package and
# caches it outside the repository, next to Debian's kubectl 1.20 (extracted,
# not installed, so an existing /usr/bin/kubectl is left alone). Installs
# etcd-server, golang, openssl and the reflect2 fix with apt-get. Idempotent:
# a second run with everything cached returns in well under a second.
#
#   bash scripts/kube_apiserver/build.sh        # build if missing
#   KUBE_REFLECTOR_CACHE=/somewhere bash ...    # default: ~/.cache/kube-reflector
#
# The recipe (see ../shared/design.md, "Environment facts"): GOPATH mode with
# Debian's Go 1.19, the vendored reflect2 1.0.1 replaced by Debian's copy
# (1.0.1 crashes on Go 1.18+), and pkg/generated/openapi generated with the
# vendored openapi-gen over every package tagged `+k8s:openapi-gen=`.
set -euo pipefail

VERSION=1.20.2
CACHE="${KUBE_REFLECTOR_CACHE:-${HOME:-/root}/.cache/kube-reflector}"
BIN="$CACHE/kube-apiserver-$VERSION"
KUBECTL="$CACHE/kubectl-$VERSION"
SRC="$CACHE/src"
GOPATH_DIR="$CACHE/gopath"
log() { echo "kube_apiserver/build: $*" >&2; }

have_all() {
  [[ -x "$BIN" && -x "$KUBECTL" ]] && command -v etcd >/dev/null && command -v openssl >/dev/null
}
if have_all; then
  log "cached: $BIN"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

# 1. Debian packages (and a deb-src entry for the same mirror).
SOURCES=/etc/apt/sources.list.d/kube-reflector-src.sources
if ! grep -rqs '^Types: *deb-src' /etc/apt/sources.list.d/ /etc/apt/sources.list; then
  log "adding deb-src entries ($SOURCES)"
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    sed 's/^Types: *deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | $SUDO tee "$SOURCES" >/dev/null
  else # one-line format
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list | $SUDO tee /etc/apt/sources.list.d/kube-reflector-src.list >/dev/null
  fi
fi
log "apt-get update + install (golang-1.19 etcd-server openssl reflect2 dpkg-dev)"
$SUDO apt-get update -q >/dev/null
$SUDO apt-get install -y -q --no-install-recommends \
  golang-1.19-go etcd-server openssl golang-github-modern-go-reflect2-dev dpkg-dev ca-certificates >/dev/null
# 1.20's vendored code predates newer Go linker rules: always Debian's Go 1.19,
# by its own path, whatever `go` comes first on PATH (Go 1.26 on these machines).
GO=/usr/lib/go-1.19/bin/go
[[ -x "$GO" ]] || { log "Debian's Go 1.19 is missing at $GO"; exit 1; }

mkdir -p "$SRC"
cd "$SRC"

# 2. kubectl 1.20 from Debian's kubernetes-client, extracted into the cache.
if [[ ! -x "$KUBECTL" ]]; then
  log "fetching Debian's kubectl"
  rm -f kubernetes-client_*.deb
  apt-get download -q kubernetes-client 2>/dev/null
  rm -rf kubectl-root && dpkg-deb -x kubernetes-client_*.deb kubectl-root
  cp kubectl-root/usr/bin/kubectl "$KUBECTL.tmp" && mv "$KUBECTL.tmp" "$KUBECTL"
fi

if [[ -x "$BIN" ]]; then exit 0; fi

# 3. The source tree, with Debian's patches applied.
if [[ ! -f k8s/.unpacked ]]; then
  log "fetching Debian's kubernetes source package"
  rm -rf k8s kubernetes_*
  apt-get source -q --download-only kubernetes 2>/dev/null
  dpkg-source -x kubernetes_*.dsc k8s >/dev/null
  touch k8s/.unpacked
fi
TREE="$SRC/k8s"

# 4. reflect2: Debian's fixed copy instead of the vendored 1.0.1.
rm -rf "$TREE/vendor/github.com/modern-go/reflect2"
cp -r /usr/share/gocode/src/github.com/modern-go/reflect2 "$TREE/vendor/github.com/modern-go/reflect2"

# 5. GOPATH mode.
mkdir -p "$GOPATH_DIR/src/k8s.io"
ln -sfn "$TREE" "$GOPATH_DIR/src/k8s.io/kubernetes"
export GOPATH="$GOPATH_DIR" GO111MODULE=off CGO_ENABLED=0 GOFLAGS="" GOTOOLCHAIN=local GOROOT=/usr/lib/go-1.19
cd "$GOPATH_DIR/src/k8s.io/kubernetes"

# 6. The OpenAPI definitions (the Makefile's gen_openapi for the KUBE target).
OPENAPI_OUT=pkg/generated/openapi/zz_generated.openapi.go
if [[ ! -s "$OPENAPI_OUT" ]]; then
  log "building openapi-gen"
  "$GO" build -o "$CACHE/openapi-gen" ./vendor/k8s.io/kube-openapi/cmd/openapi-gen
  log "generating $OPENAPI_OUT"
  # Every directory (staging named as vendor/, like the Makefile's kfind) with a
  # file carrying a column-0 `+k8s:` tag and an `+k8s:openapi-gen=` tag.
  dirs=$(find -H . \( -path ./_\* -o -path ./.\* -o -path ./vendor \) -prune -o -type f -name '*.go' -print \
    | xargs grep -l '^// *+k8s:' | xargs grep -l '+k8s:openapi-gen=' \
    | sed 's|/[^/]*$||; s|^\./||; s|^staging/src|vendor|' | LC_ALL=C sort -u \
    | grep -v -E '^vendor/k8s.io/(code-generator|sample-apiserver)/' \
    | sed 's|^|k8s.io/kubernetes/|' | paste -sd, -)
  "$CACHE/openapi-gen" --logtostderr \
    -i "$dirs" \
    -p k8s.io/kubernetes/pkg/generated/openapi \
    -O zz_generated.openapi \
    -h vendor/k8s.io/code-generator/hack/boilerplate.go.txt \
    -r "$CACHE/openapi-violations.report" >/dev/null 2>"$CACHE/openapi-gen.log" \
    || { tail -20 "$CACHE/openapi-gen.log" >&2; exit 1; }
fi

# 7. kube-apiserver.
log "go build ./cmd/kube-apiserver (takes ~7 minutes on 2 cores)"
# The version variables, under both names the vendored package may carry
# (so that /version answers v1.20.2, which the reflector names in its logs).
LDFLAGS="-s -w"
for V in k8s.io/kubernetes/vendor/k8s.io/component-base/version k8s.io/component-base/version; do
  LDFLAGS="$LDFLAGS -X $V.gitVersion=v$VERSION -X $V.gitMajor=1 -X $V.gitMinor=20"
  LDFLAGS="$LDFLAGS -X $V.gitTreeState=clean -X $V.buildDate=2021-01-13T00:00:00Z"
done
"$GO" build -o "$BIN.tmp" -ldflags "$LDFLAGS" ./cmd/kube-apiserver
mv "$BIN.tmp" "$BIN"
log "built $BIN"
"$BIN" --version >&2
