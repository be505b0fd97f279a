#!/usr/bin/env bash
# The test suite under AddressSanitizer (with LeakSanitizer), and the engine and player tests
# under ThreadSanitizer. Each uses its own build folder so the normal build is not disturbed.
# Usage: Tests/sanitizers.sh [address|thread]...   (default: both)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(address thread)
export LSAN_OPTIONS="suppressions=$root/Tests/lsan-suppressions.txt:print_suppressions=0"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Shows the test run's summary and any sanitizer report, not the build's chatter.
quiet() {
  cat > "$log"
  grep -E "Test run with|✘|ERROR: (Address|Thread|Leak)Sanitizer|WARNING: ThreadSanitizer|SUMMARY: " "$log" | head -60
  # The first sanitizer report whole, so a CI log shows both accesses and their stacks.
  awk '/^(WARNING|ERROR): .*Sanitizer/ {show = 1} show {print} /^SUMMARY: / && show {exit}' "$log" | head -80
}
for kind in "${kinds[@]}"; do
  case "$kind" in
    address)
      # The JACK suite measures frames against a running server in real time: under
      # AddressSanitizer's slowdown a client misses periods (seen: a MIDI event one period
      # late), which says nothing about memory. It runs in the plain suite and under PipeWire.
      # The batch and soak suites render the same library code the in-process suites cover,
      # hundreds of times over (batches spawn a tactus process per run). The command-line suites
      # that only drive library code through a spawned process (info, dump, edit, instruments,
      # SoundFont, SFZ, tails, stems, lyrics, completion, signal masks) are left out too: that
      # code runs in-process here in the library suites. What stays from the CLI is its own
      # unsafe code: output destinations and descriptors, hostile arguments, the audio writers'
      # and decoders' C calls, and plugin hosting. Every parser, the engine, the sampler, the
      # recorders and the C libraries' wrappers run.
      asan_skip="JACKTests|BatchRenderCLITests|SoakTests|CLITests\.CLITests|EditCLITests|InstrumentCLITests|LyricsCLITests"
      asan_skip+="|SFZCLITests|SoundFontCLITests|TailCLITests|StemsCLITests|CompletionTests|SignalMaskTests"
      # Batches again (reruns, folder search) and signals during a long preparation: process
      # control around library code the library suites run in-process.
      asan_skip+="|BatchRerunCLITests|BatchDiscoveryCLITests|SignalDuringPreparationCLITests"
      # On an optimized build (with -enable-testing for the tests' @testable imports): the
      # sanitizer then slows optimized code instead of debug code. Measured when the suite had
      # 498 tests here: a 413 s build and a 115 s run, against 210 s and 726 s in debug.
      # Assertions (debug only) are checked by the plain suite.
      # Built without the JACK driver and its suite, and without the benchmark programs
      # (TACTUS_TEST_TARGETS, see Package.swift): every other test target.
      asan_targets=$(swift package describe --type json | python3 -c '
import json, sys
print(",".join(t["name"] for t in json.load(sys.stdin)["targets"] if t["type"] == "test" and t["name"] != "JACKTests"))')
      echo "== AddressSanitizer (optimized build): the library suites and the CLI's own unsafe code (not the real-time JACK tests, batches or soaks)"
      if ! TACTUS_TEST_TARGETS=$asan_targets swift test -c release -Xswiftc -enable-testing --sanitize=address --scratch-path .build-asan --skip "$asan_skip" 2>&1 | quiet; then
        echo "sanitizers.sh: the suite failed under AddressSanitizer" >&2
        exit 1
      fi
      ;;
    thread)
      # The suites where threads meet: the engine and player (render thread against control
      # thread), sessions, recording, the MIDI port scheduler and the ALSA drivers. The
      # command-line suites inside PlaybackTests spawn processes whose threads ThreadSanitizer
      # does not follow from here, so they are left to the plain suite.
      # Optimized too, as for AddressSanitizer, and built with only the three test targets the
      # filter selects and what they depend on (TACTUS_TEST_TARGETS, see Package.swift).
      # Measured on this tree, the same 174 tests: a 264 s build and a 90 s run, against about
      # 240 s and 420 s for a debug build of the whole package.
      echo "== ThreadSanitizer (optimized build): engine, player, session, recording and driver tests"
      if ! TACTUS_TEST_TARGETS=PlaybackTests,ALSATests,SFZPlaybackTests TSAN_OPTIONS="halt_on_error=1" swift test -c release -Xswiftc -enable-testing --sanitize=thread --scratch-path .build-tsan --filter "PlaybackTests|ALSATests" \
          --skip "RenderCommandTests|RecordCommandTests|PlayCommandTests|PlayerDeviceTests|RecordDeviceTests|MIDIPortDeviceTests" 2>&1 | quiet; then
        echo "sanitizers.sh: engine, player or driver tests failed under ThreadSanitizer" >&2
        exit 1
      fi
      ;;
    *) echo "sanitizers.sh: unknown sanitizer '$kind'" >&2; exit 2 ;;
  esac
done
