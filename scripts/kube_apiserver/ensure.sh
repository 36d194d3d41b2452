#!/usr/bin/env bash
# Makes sure the real-API-server test dependencies are in place: kube-apiserver
# 1.20.2 (Debian's source, Go 1.19) with Debian's etcd and kubectl 1.20, and a
# current release (kube-apiserver, kubectl and etcd 3.6 from Go modules): a
# no-op when cached, builds (~7 + ~11 minutes on 2 cores) on a fresh machine.
# Used by .ci/run and npm test.
# Set KUBE_REFLECTOR_SKIP_APISERVER=1 to skip (the e2e tests then skip too).
set -euo pipefail
if [[ "${KUBE_REFLECTOR_SKIP_APISERVER:-}" == 1 ]]; then
  echo "kube_apiserver/ensure: skipped (KUBE_REFLECTOR_SKIP_APISERVER=1)" >&2
  exit 0
fi
here="$(dirname "$0")"
bash "$here/build.sh"
# The current release (kube-apiserver, kubectl, etcd from Go modules).
if [[ "${KUBE_REFLECTOR_SKIP_CURRENT:-}" == 1 ]]; then
  echo "kube_apiserver/ensure: current release skipped (KUBE_REFLECTOR_SKIP_CURRENT=1)" >&2
  exit 0
fi
bash "$here/build_current.sh"
