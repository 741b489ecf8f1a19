#!/usr/bin/env bash
# Base images for the image check, made from Debian's packages: the official images api/Dockerfile names cannot be
# pulled here. One root filesystem per stage (debootstrap minbase plus a JDK or a JRE), committed with buildah from
# scratch: the build stage on Debian 12 (bookworm) with its JDK 17, the runtime on Debian 13 (trixie), the stable
# release that packages a JRE 25 (the image's AOT cache, ADR 0202). Cached in buildah's storage under a tag derived
# from the suite and the package list: a machine makes them once, later runs reuse them, and a change makes new ones.
# Usage: base-images.sh [--rebuild]      prints BUILD_BASE=<image> and RUNTIME_BASE=<image>
set -euo pipefail
export STORAGE_DRIVER="${STORAGE_DRIVER:-vfs}"

build_suite=bookworm
runtime_suite=trixie
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# What the official eclipse-temurin images give each stage: the JDK and curl (the Maven wrapper downloads Maven
# with it) for the build; the JRE and curl (compose's healthcheck) for the runtime.
build_packages="openjdk-17-jdk-headless ca-certificates curl"
runtime_packages="openjdk-25-jre-headless ca-certificates curl"
rebuild=false
[ "${1:-}" = --rebuild ] && rebuild=true

image_name() { # NAME SUITE PACKAGES
  echo "localhost/concert-cache-ci/$1:$2-$(echo "$2 $3" | sha256sum | cut -c1-12)"
}

make_image() { # IMAGE SUITE PACKAGES
  local image=$1 suite=$2 packages=$3
  if ! $rebuild && buildah inspect --type image "$image" >/dev/null 2>&1; then
    return
  fi
  local rootfs log
  rootfs="$(mktemp -d /var/tmp/concert-cache-rootfs.XXXXXX)"
  log="$(mktemp /var/tmp/concert-cache-base-image.XXXXXX.log)"
  # apt inside the chroot downloads as the _apt user, which must reach its directories.
  chmod 755 "$rootfs"
  # The mount must go whatever happens, or the directory cannot be removed.
  trap "umount -l '$rootfs/proc' 2>/dev/null || true; rm -rf '$rootfs'" RETURN
  echo "base-images: making $image from Debian $suite ($packages); log in $log" >&2
  debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$log" 2>&1
  mount -t proc proc "$rootfs/proc"
  # ca-certificates-java runs java in its postinst: /proc must be there.
  chroot "$rootfs" /bin/sh -c "apt-get update && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends $packages && apt-get clean && rm -rf /var/lib/apt/lists/*" \
    >>"$log" 2>&1
  umount "$rootfs/proc"
  local container
  container="$(buildah from scratch)"
  buildah copy --quiet "$container" "$rootfs" / >/dev/null
  buildah config --env LANG=C.UTF-8 --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    "$container"
  buildah commit --quiet --rm "$container" "$image" >/dev/null
  rm -f "$log"
}

# trust_local_cas IMAGE: prints the name of an image on top of IMAGE (made first if missing) that also trusts the CA certificates this machine
# added to its own trust store (/usr/local/share/ca-certificates: a TLS-inspecting egress proxy, a company CA), so
# that the build stage reaches Maven Central wherever this machine does. Java's trust store follows
# (ca-certificates-java). Only the build stage needs it: the runtime image makes no outbound TLS connection here.
trust_local_cas() {
  local image=$1 local_cas=/usr/local/share/ca-certificates
  local trusting
  trusting="$image-ca-$(cat "$local_cas"/*.crt | sha256sum | cut -c1-12)"
  if $rebuild || ! buildah inspect --type image "$trusting" >/dev/null 2>&1; then
    make_image "$image" "$build_suite" "$build_packages"
    local container
    container="$(buildah from --pull-never "$image")"
    buildah copy --quiet "$container" "$local_cas" /usr/local/share/ca-certificates/ >/dev/null
    buildah run --isolation chroot "$container" -- update-ca-certificates >/dev/null 2>&1
    buildah commit --quiet --rm "$container" "$trusting" >/dev/null
  fi
  echo "$trusting"
}

build_base="$(image_name jdk17-build "$build_suite" "$build_packages")"
runtime_base="$(image_name jre25-runtime "$runtime_suite" "$runtime_packages")"
# With certificates to add, the image on top is what a later run looks for; the Debian one under it is made first.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  build_base="$(trust_local_cas "$build_base")"
else
  make_image "$build_base" "$build_suite" "$build_packages"
fi
make_image "$runtime_base" "$runtime_suite" "$runtime_packages"
echo "BUILD_BASE=$build_base"
echo "RUNTIME_BASE=$runtime_base"
