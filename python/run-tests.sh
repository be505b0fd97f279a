#!/bin/sh
# Builds the tactus CLI the render test compares with and the wheel (wheel.sh: the library in
# release with the same flags, so the modules are built once; tactus-*-py3-none-manylinux_*.whl),
# installs it into a fresh virtual environment (the wheel brings numpy, its one dependency; the
# tests add mido and pytest), and runs the tests from outside the source tree with the Swift
# toolchain out of reach: in a private mount namespace where an empty tmpfs covers the
# toolchain's folder, PATH without it and no TACTUS_LIBRARY, so the installed wheel works as
# on a machine without Swift. Hiding the folder needs root (as in CI); elsewhere the tests run
# with only PATH cleaned, and say so. Prints the wheel's size and the import time. Exits
# non-zero when anything fails. WHEEL_DIR keeps the wheel there (default: a temporary folder).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root"
swift build -c release -Xswiftc -static-stdlib --product tactus
TACTUS_CLI="$(swift build -c release -Xswiftc -static-stdlib --show-bin-path)/tactus"
export TACTUS_CLI
# /opt/swift/usr/bin/swift -> /opt/swift
toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")
work=$(mktemp -d /tmp/tactus-python.XXXXXX)
trap 'rm -rf "$work"' EXIT
wheels=${WHEEL_DIR:-$work/dist}
mkdir -p "$wheels"
"$here/wheel.sh" "$wheels"
wheel=$(ls "$wheels"/tactus-*-py3-none-manylinux_*.whl)
unzip -l "$wheel" | grep -q " tactus/libTactusC.so" || { echo "run-tests.sh: $wheel has no tactus/libTactusC.so" >&2; exit 1; }
venv=$work/venv
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet "$wheel"
"$venv/bin/pip" install --quiet mido==1.3.3 pytest
corpus=${TACTUS_CORPUS:-$root/../shared/corpus}
cd "$work"
# The tests' own script, run below with the toolchain out of reach.
cat > "$work/tests.sh" <<EOF
set -eu
if command -v swift >/dev/null 2>&1; then echo "run-tests.sh: swift is still on PATH" >&2; exit 1; fi
if [ "\${HIDDEN:-0}" = 1 ] && [ -n "\$(ls -A "$toolchain")" ]; then echo "run-tests.sh: $toolchain is still visible" >&2; exit 1; fi
"$venv/bin/python" -c 'import time; t = time.perf_counter(); import numpy; n = time.perf_counter(); import tactus; e = time.perf_counter(); print(f"import numpy {1000 * (n - t):.0f} ms, then import tactus {1000 * (e - n):.0f} ms")'
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$here/tests"
EOF
clean_path=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v "^$toolchain" | paste -sd: -)
if [ "$(id -u)" = 0 ] && unshare --mount true 2>/dev/null; then
  echo "tests with $toolchain hidden under an empty tmpfs"
  unshare --mount sh -c 'mount -t tmpfs -o size=1m tactus-no-toolchain "$1" && shift && exec "$@"' sh "$toolchain" \
    env -u TACTUS_LIBRARY -u LD_LIBRARY_PATH HIDDEN=1 PATH="$clean_path" TACTUS_CORPUS="$corpus" sh "$work/tests.sh"
else
  echo "tests with the toolchain off PATH only ($toolchain could not be hidden: needs root and unshare)"
  env -u TACTUS_LIBRARY -u LD_LIBRARY_PATH PATH="$clean_path" TACTUS_CORPUS="$corpus" sh "$work/tests.sh"
fi
