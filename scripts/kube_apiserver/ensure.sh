#!/usr/bin/env bash
# Makes sure the real-API-server test dependencies are in place (kube-apiserver
# 1.20.2 built and cached, etcd, kubectl 1.20, openssl): a no-op when cached,
# a build (~7 minutes on 2 cores) on a fresh machine. Used by .ci/run.
# Set KUBE_REFLECTOR_SKIP_APISERVER=1 to skip (the e2e tests then skip too).
set -euo pipefail
if [[ "${KUBE_REFLECTOR_SKIP_APISERVER:-}" == 1 ]]; then
  echo "kube_apiserver/ensure: skipped (KUBE_REFLECTOR_SKIP_APISERVER=1)" >&2
  exit 0
fi
exec bash "$(dirname "$0")/build.sh"
