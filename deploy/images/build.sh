#!/usr/bin/env bash
# Builds one OCI image per service from Debian packages only (docs/deploy.md, "Images";
# docs/adr/0010-one-image-per-service.md). No registry base image: the root filesystem comes from mmdebstrap.
#
#   deploy/images/build.sh <install-prefix-dir> <out-dir> [tag]
#
# <install-prefix-dir> is a `cmake --install` tree (bin/, share/accelopt/). Writes <out-dir>/accelopt-<service>-<tag>.oci.tar
# (an OCI image layout, tag <tag>; pushed as accelopt/<service>:<tag>, the names deploy/kubernetes/render.sh uses) for
# orchestrator, planner, executor, profiler and memory. The tag defaults to the git short revision, as render.sh's.
#
# Layers: (1) the shared base, mmdebstrap --variant=apt with packages.base and the user accelopt (10001), cached in
# <out-dir>/cache keyed by the package list and the suite; (2) the service's own Debian packages (packages.<service>),
# installed with apt inside a copy of the base; (3) the accelopt install tree under /opt/accelopt.
# Needs root (or fakeroot-free mmdebstrap unshare mode), mmdebstrap and umoci (installed here when missing).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
install_dir=$(realpath "${1:?usage: build.sh <install-prefix-dir> <out-dir> [tag]}")
out_dir=$(realpath -m "${2:?usage: build.sh <install-prefix-dir> <out-dir> [tag]}")
tag=${3:-$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)}
suite=${ACCELOPT_IMAGE_SUITE:-bookworm}
services=(${ACCELOPT_IMAGE_SERVICES:-orchestrator planner executor profiler memory})
uid=10001

for tool in mmdebstrap umoci; do
  if ! command -v "$tool" >/dev/null; then
    echo "images: installing $tool"
    apt-get install -y -qq --no-install-recommends "$tool" >/dev/null
  fi
done
[[ "${ACCELOPT_IMAGE_BASE_ONLY:-}" == 1 ]] || [[ -x "$install_dir/bin/accelopt-orchestrator" ]] || { echo "images: no bin/accelopt-orchestrator in $install_dir" >&2; exit 1; }

packages() { { grep -v '^\s*#' "$here/packages.$1" || true; } | sed '/^\s*$/d' | paste -sd, -; }

mkdir -p "$out_dir/cache"
work=$(mktemp -d "$out_dir/work.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Layer 1: the base root filesystem (a directory), shared by every image and rebuilt only when its package list
# changes.
base_key=$( (echo "$suite"; cat "$here/packages.base"; echo "uid=$uid") | sha256sum | cut -c1-16)
base_root="$out_dir/cache/base-$base_key"
if [[ ! -d "$base_root" ]]; then
  rm -rf "$base_root.tmp"
  echo "images: mmdebstrap $suite base ($(packages base))"
  SOURCE_DATE_EPOCH=0 mmdebstrap --variant=apt --include="$(packages base)" \
    --customize-hook="echo 'accelopt:x:$uid:$uid:accelopt:/var/lib/accelopt:/bin/false' >>\"\$1/etc/passwd\"" \
    --customize-hook="echo 'accelopt:x:$uid:' >>\"\$1/etc/group\"" \
    --customize-hook="install -d -o $uid -g $uid -m 0750 \"\$1/var/lib/accelopt\"" \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    "$suite" "$base_root.tmp" >"$work/mmdebstrap.log" 2>&1 || { tail -20 "$work/mmdebstrap.log" >&2; exit 1; }
  mv "$base_root.tmp" "$base_root"
fi

[[ "${ACCELOPT_IMAGE_BASE_ONLY:-}" == 1 ]] && { echo "images: base root filesystem in $base_root"; exit 0; }

# The base layer as an OCI image, repacked once and copied into every service layout.
base_layout="$work/base"
umoci init --layout "$base_layout"
umoci new --image "$base_layout:base"
umoci unpack --image "$base_layout:base" "$work/base-bundle" >/dev/null
cp -a "$base_root/." "$work/base-bundle/rootfs/"
umoci repack --image "$base_layout:base" "$work/base-bundle"
rm -rf "$work/base-bundle"

# Runs apt-get inside a root filesystem with the host's network and resolver.
apt_in() {
  local rootfs=$1
  shift
  unshare --mount --fork sh -ec '
    rootfs=$1; shift
    mount -t proc proc "$rootfs/proc"
    mount --rbind /dev "$rootfs/dev"
    mount --bind /etc/resolv.conf "$rootfs/etc/resolv.conf"
    chroot "$rootfs" env DEBIAN_FRONTEND=noninteractive apt-get "$@"' sh "$rootfs" "$@"
}

for service in "${services[@]}"; do
  layout="$work/$service"
  bundle="$work/$service-bundle"
  cp -a "$base_layout" "$layout"
  umoci unpack --image "$layout:base" "$bundle" >/dev/null
  rootfs="$bundle/rootfs"
  extra=$(packages "$service")
  if [[ -n "$extra" ]]; then
    echo "images: $service layer: ${extra//,/ }"
    apt_in "$rootfs" update -qq >"$work/apt-$service.log" 2>&1 || { tail "$work/apt-$service.log" >&2; exit 1; }
    apt_in "$rootfs" install -y -qq --no-install-recommends ${extra//,/ } >>"$work/apt-$service.log" 2>&1 ||
      { tail "$work/apt-$service.log" >&2; exit 1; }
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
      "$rootfs"/usr/share/man
    umoci repack --image "$layout:packages" "$bundle"
    from=packages
  else
    from=base
  fi
  # The accelopt layer: this service's binary, the CLI (for exec-based debugging) and the resources it reads.
  mkdir -p "$rootfs/opt/accelopt/bin" "$rootfs/opt/accelopt/share/accelopt" "$rootfs/etc/accelopt"
  install -m 0755 "$install_dir/bin/accelopt-$service" "$install_dir/bin/accelopt" "$rootfs/opt/accelopt/bin/"
  case $service in
    profiler) resources=(harness examples) ;;
    planner | executor) resources=(prompts builtin) ;;
    memory) resources=(prompts) ;;
    *) resources=() ;;
  esac
  for r in "${resources[@]}"; do cp -a "$install_dir/share/accelopt/$r" "$rootfs/opt/accelopt/share/accelopt/"; done
  chown -R root:root "$rootfs/opt/accelopt"
  umoci repack --image "$layout:$from" "$bundle"
  rm -rf "$bundle"
  umoci config --image "$layout:$from" --tag "$tag" \
    --config.user "$uid:$uid" \
    --config.entrypoint "/opt/accelopt/bin/accelopt-$service" \
    --config.workingdir /var/lib/accelopt \
    --config.env "PATH=/opt/accelopt/bin:/usr/local/bin:/usr/bin:/bin" \
    --config.env "ACCELOPT_DATA_DIR=/opt/accelopt/share/accelopt" \
    --config.exposedports 50051/tcp --config.exposedports 9090/tcp \
    --config.label "org.opencontainers.image.title=accelopt-$service" \
    --config.label "org.opencontainers.image.revision=$tag" \
    --config.label "org.opencontainers.image.source=accelopt" \
    --history.created_by "accelopt deploy/images/build.sh $service"
  umoci rm --image "$layout:base"
  [[ "$from" == packages ]] && umoci rm --image "$layout:packages"
  umoci gc --layout "$layout"
  archive="$out_dir/accelopt-$service-$tag.oci.tar"
  tar -C "$layout" -cf "$archive.tmp" . && mv "$archive.tmp" "$archive"
  ln -sfn "$(basename "$archive")" "$out_dir/accelopt-$service.oci.tar"
  rm -rf "$layout"
  echo "images: $archive ($(du -h "$archive" | cut -f1))"
done
echo "$tag" >"$out_dir/TAG"
