#!/bin/sh
# Builds the library (build.sh) and the tactus CLI the render test compares with (release, the
# same flags, so the modules are built once), installs the package into a fresh virtual
# environment with numpy, mido and pytest, and runs the tests from outside the source tree, so
# they see the installed package. Exits non-zero when anything fails.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
"$here/build.sh"
cd "$root"
swift build -c release -Xswiftc -static-stdlib --product tactus
TACTUS_CLI="$(swift build -c release -Xswiftc -static-stdlib --show-bin-path)/tactus"
export TACTUS_CLI
venv=$(mktemp -d /tmp/tactus-venv.XXXXXX)
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet numpy mido==1.3.3 pytest
"$venv/bin/pip" install --quiet "$here"
cd "$venv"
# TACTUS_LIBRARY would bypass the installed copy.
env -u TACTUS_LIBRARY TACTUS_CORPUS="${TACTUS_CORPUS:-$root/../shared/corpus}" \
    "$venv/bin/python" -m pytest -q "$here/tests"
