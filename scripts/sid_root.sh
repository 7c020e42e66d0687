#!/usr/bin/env bash
# Create a Debian sid root with CPython 3.14 and 3.15 (and their -dev/-venv packages, a C
# toolchain and LLVM 19) under build/sid-root, for building and testing gpujit on Pythons that
# the host's Debian does not ship. sid's interpreters need a newer glibc than the host's, so they
# run inside the root (chroot), not on the host.
#   scripts/sid_root.sh            create the root, or do nothing when it is complete
#   scripts/sid_root.sh --path     print the root's path and exit
# Needs root (debootstrap, chroot); installs debootstrap from apt when it is missing.
# The mirror is the one the host's apt uses. Takes several minutes and about 1 GB once.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD/build/sid-root
if [ "${1:-}" = --path ]; then echo "$ROOT"; exit 0; fi
DONE=$ROOT/.gpujit-root-complete
# installed after the bootstrap; the stamp holds this list, so a root made with another is completed
PKGS="llvm-19-dev zlib1g-dev libzstd-dev libffi-dev git"
[ "$(cat "$DONE" 2>/dev/null)" = "$PKGS" ] && exit 0

[ "$(id -u)" = 0 ] || { echo "gpujit: scripts/sid_root.sh needs root (debootstrap, chroot)" >&2; exit 1; }
mirror=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
mirror=${mirror:-http://deb.debian.org/debian}
APT=(-o Acquire::Check-Valid-Until=false)   # sid's Release file on the mirror may be past its date

if ! command -v debootstrap >/dev/null 2>&1 && [ ! -x /usr/sbin/debootstrap ]; then
    echo "gpujit: installing debootstrap (apt)" >&2
    apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null
fi
export PATH=$PATH:/usr/sbin:/sbin

# debootstrap cannot resume into a half-made root, so a root without its first stamp is redone.
if [ ! -f "$ROOT/.gpujit-bootstrapped" ]; then
    # what scripts/sid_run.sh or an interrupted debootstrap mounted inside, innermost first
    awk -v r="$ROOT/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r | xargs -r -n1 umount -l
    rm -rf --one-file-system "$ROOT"
    mkdir -p "$ROOT"
    echo "gpujit: debootstrap sid into $ROOT from $mirror" >&2
    debootstrap --variant=minbase \
        --include=python3.14-dev,python3.14-venv,python3.15-dev,python3.15-venv,gcc,g++,make \
        sid "$ROOT" "$mirror" >"$ROOT.log" 2>&1 || { tail -20 "$ROOT.log" >&2; exit 1; }
    touch "$ROOT/.gpujit-bootstrapped"
fi
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
mkdir -p "$ROOT/etc/ssl/certs"
cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/ca-certificates.crt"
chroot "$ROOT" apt-get "${APT[@]}" update -qq
chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive apt-get "${APT[@]}" install -y -qq \
    --no-install-recommends $PKGS >/dev/null
chroot "$ROOT" apt-get clean
echo "$PKGS" > "$DONE"
echo "gpujit: sid root ready at $ROOT" >&2
