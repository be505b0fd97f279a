#!/usr/bin/env bash
# The JACK session test under PipeWire: a bare `pipewire` daemon in a private runtime folder,
# and the test bundle run through `pw-jack`, which points the loader at PipeWire's libjack.
# Usage: Tests/JACK/pipewire.sh   (after `swift build --build-tests`; apt packages pipewire pipewire-jack)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
if ! command -v pipewire >/dev/null || ! command -v pw-jack >/dev/null; then
  echo "PipeWire JACK test skipped: needs pipewire and pw-jack (Debian packages pipewire, pipewire-jack)"
  exit 77
fi
bin=$(swift build --show-bin-path)
runtime=$(mktemp -d /tmp/tactus-pipewire.XXXXXX)
chmod 700 "$runtime"
export XDG_RUNTIME_DIR=$runtime
# No session bus here: PipeWire says so and runs without it.
pipewire > "$runtime/pipewire.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$runtime"' EXIT
for _ in $(seq 100); do [ -S "$runtime/pipewire-0" ] && break; sleep 0.05; done
[ -S "$runtime/pipewire-0" ] || { echo "pipewire did not start:"; cat "$runtime/pipewire.log"; exit 1; }
# Long periods, as in the jackd test: a debug build on a loaded machine must not miss one.
TACTUS_PIPEWIRE_JACK=1 pw-jack -p 2048 -s 48000 "$bin/TactusPackageTests.xctest" --testing-library swift-testing --filter JACKPipeWireTests
