#!/usr/bin/env bash
# The test suite under the newest Python and the newest release of every
# library skshapley supports, beside whatever Python the machine has.
#
# A machine with an older Python (3.11 on Debian 12) gets older releases from
# PyPI: xgboost >= 3.3 and shapiq >= 1.7 need Python >= 3.12. This script
# makes the environment a user with a new Python gets:
#
#   tools/newest-python.sh setup        # once per machine (about 10 minutes):
#       Python 3.13 (the machine's own /usr/bin/python3.13 if it has one,
#       otherwise a Debian 13 root made with debootstrap), a virtual
#       environment holding the newest release of each dependency and the
#       project's [test] and [bench] extras, and the project installed from
#       this checkout; in a Debian root also Chromium, in which the tests
#       check the HTML report's layout (beside the machine's Python 3.13,
#       the machine's own Chromium is used)
#   tools/newest-python.sh install      # reinstall the project after a change
#   tools/newest-python.sh run CMD...   # e.g. run python -m pytest -q
#   tools/newest-python.sh versions     # what the environment holds
#   tools/newest-python.sh ready        # exit status 0 once setup has run
#
# Run it from anywhere inside the checkout; it needs root (debootstrap, chroot
# and bind mounts). In the Debian root the checkout's parent folder is
# bind-mounted at the same path, so paths are the same inside and out.
# Environment: SKSHAPLEY_NEWEST_ROOT (default /opt/skshapley-newest),
# SKSHAPLEY_NEWEST_CHROOT=1 (use a Debian root even beside a Python 3.13);
# CI, HYPOTHESIS_PROFILE and SKSHAPLEY_REQUIRE_BROWSER reach the commands run.
set -euo pipefail

checkout=$(cd "$(dirname "$0")/.." && pwd)
parent=$(dirname "$checkout")
root=${SKSHAPLEY_NEWEST_ROOT:-/opt/skshapley-newest}
# What "newest" means: every library the project runs or is tested with,
# upgraded before the project's own lower bounds are applied.
libraries=(numpy scipy pandas scikit-learn xgboost lightgbm shap shapiq
  matplotlib skops pyarrow polars dask distributed hypothesis pytest)

if [ -z "${SKSHAPLEY_NEWEST_CHROOT:-}" ] && [ -x /usr/bin/python3.13 ] &&
  /usr/bin/python3.13 -c "import venv, ensurepip" 2>/dev/null; then
  chroot_dir="" venv="$root/venv" venv_on_host="$root/venv"
else
  chroot_dir="$root" venv=/opt/venv venv_on_host="$root/opt/venv"
fi

mount_once() {  # mount_once TARGET ARGS...: mount unless TARGET is mounted
  local target=$1
  shift
  mountpoint -q "$target" || mount "$@" "$target"
}

bind_checkout() {  # the checkout's parent folder, at the same path in the root
  local target="$root$parent"
  mkdir -p "$target"
  # A binding left by an earlier checkout at the same path (CI deletes its
  # checkout and clones a new one there) still shows the deleted folder: it is
  # replaced by the folder that is there now.
  if mountpoint -q "$target" &&
    [ "$(stat -c %d:%i "$target")" != "$(stat -c %d:%i "$parent")" ]; then
    umount --lazy "$target"
  fi
  mount_once "$target" --bind "$parent"
}

prepare_root() {  # the Debian root's kernel file systems and the checkout
  [ -n "$chroot_dir" ] || return 0
  mount_once "$root/proc" -t proc proc
  mount_once "$root/dev" --bind /dev
  # (multiprocessing's semaphores; where /dev/shm cannot be mounted, they
  # fall back to what the root has)
  mount_once "$root/dev/shm" -t tmpfs tmpfs || true
  bind_checkout
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
  fi
}

in_env() {  # a command in the environment's venv, from the checkout, clean env
  local -a enter=()
  [ -z "$chroot_dir" ] || enter=("$(command -v chroot || echo /usr/sbin/chroot)" "$chroot_dir")
  env -i PATH="$venv/bin:/usr/local/bin:/usr/bin:/bin" HOME=/root LANG=C.UTF-8 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    ${CI:+CI="$CI"} ${HYPOTHESIS_PROFILE:+HYPOTHESIS_PROFILE="$HYPOTHESIS_PROFILE"} \
    ${SKSHAPLEY_REQUIRE_BROWSER:+SKSHAPLEY_REQUIRE_BROWSER="$SKSHAPLEY_REQUIRE_BROWSER"} \
    "${enter[@]}" /bin/bash -c 'cd "$1" && shift && exec "$@"' _ "$checkout" "$@"
}

make_root() {  # a minimal Debian 13 with Python 3.13, compilers and Java
  [ -n "$chroot_dir" ] && [ ! -x "$root/usr/bin/python3.13" ] || return 0
  if ! command -v debootstrap >/dev/null; then
    apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null
  fi
  local mirror
  mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources \
    2>/dev/null || true)
  [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
  # Java: the Spark recipe of the docs runs in the test suite.
  debootstrap --variant=minbase \
    --include=python3.13,python3.13-venv,python3.13-dev,gcc,g++,ca-certificates,default-jre-headless \
    trixie "$root" "$mirror"
}

browser_in_root() {  # Chromium and the report's fonts in the Debian root
  [ -n "$chroot_dir" ] && [ ! -x "$root/usr/bin/chromium" ] || return 0
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    "$(command -v chroot || echo /usr/sbin/chroot)" "$root" /bin/sh -c \
    'apt-get update -qq && apt-get install -y -qq --no-install-recommends \
       chromium fonts-liberation >/dev/null'
}

install_project() {
  in_env python -m pip install -q ".[test,bench]"
  versions
}

versions() {
  in_env python -c "import sys; from importlib.metadata import version
names = ['numpy', 'scipy', 'pandas', 'scikit-learn', 'xgboost', 'lightgbm',
         'shap', 'shapiq', 'woodelf-explainer', 'skops', 'skshapley']
print('Python', sys.version.split()[0], '|',
      ' | '.join(f'{name} {version(name)}' for name in names))"
}

case "${1:-}" in
  setup)
    make_root
    prepare_root
    browser_in_root
    if [ ! -f "$venv_on_host/pyvenv.cfg" ]; then
      mkdir -p "$(dirname "$venv_on_host")"
      in_env /usr/bin/python3.13 -m venv "$venv"
    fi
    in_env python -m pip install -q --upgrade pip
    in_env python -m pip install -q --upgrade "${libraries[@]}"
    install_project
    ;;
  install) prepare_root && install_project ;;
  versions) prepare_root && versions ;;
  run) shift && prepare_root && in_env "$@" ;;
  ready) [ -f "$venv_on_host/pyvenv.cfg" ] ;;
  *) sed -n '2,27p' "$0" && exit 2 ;;
esac
