#!/usr/bin/env bash
# Real-kernel tests: boots a throw-away QEMU VM with the ALSA sequencer, snd-virmidi, snd-aloop
# and snd-dummy (through the recipe in ../shared/alsa-vm), copies the built tactus binary, the
# test bundle and the ALSA utilities in, and runs Tests/VM/guest.sh there.
# Usage: Tests/VM/run-vm-tests.sh   (after `swift build --build-tests`)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
shared=${TACTUS_SHARED:-$root/../shared}
vm="$shared/alsa-vm/run-in-vm.sh"
if [ ! -f "$vm" ]; then
  echo "VM tests skipped: $vm not found"
  exit 0
fi
cd "$root"
bin=$(swift build --show-bin-path)
for f in "$bin/tactus" "$bin/TactusPackageTests.xctest"; do
  [ -e "$f" ] || { echo "run-vm-tests: $f is missing; run swift build --build-tests first" >&2; exit 2; }
done
# Real-time playback needs an optimized tactus: the VM's CPU is emulated (TCG), and a debug
# build renders the synthesizer slower than real time there. It is built with the flags of the
# Python library (python/build.sh), so in CI, which builds that first, only the executables are
# compiled and linked here, not the whole library a second time.
release_build=(swift build -c release -Xswiftc -static-stdlib)
"${release_build[@]}" --product tactus >&2
"${release_build[@]}" --product tactus-soak >&2
release=$("${release_build[@]}" --show-bin-path)
tools=()
for t in arecord aplay aplaymidi arecordmidi aconnect; do
  p=$(command -v "$t" || true)
  [ -n "$p" ] && tools+=(-f "$p")
done
# libasound is loaded at run time, so the VM's ldd closure does not see it: copy it by name.
for lib in $(ldconfig -p | awk '/libasound\.so\.2 .*x86-64/ {print $NF}'); do
  tools+=(-f "$lib" -f "$(readlink -f "$lib")")
done
bash "$vm" -t "${TACTUS_VM_TIMEOUT:-600}" -m 2048 \
  -f "$bin/tactus" -f "$release/tactus" -f "$release/tactus-soak" -f "$bin/TactusPackageTests.xctest" -f "$root/Songs" -f "$root/Tests/VM/guest.sh" "${tools[@]}" \
  -- sh "$root/Tests/VM/guest.sh" "$bin" "$root" "$release"
