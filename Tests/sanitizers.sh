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
  # The first sanitizer report whole, so a CI log shows both accesses and their stacks. A
  # report's first line may carry the process id first (AddressSanitizer's "==PID==ERROR:").
  awk '/^(==[0-9]+==)?(WARNING|ERROR): .*Sanitizer/ {show = 1} show {print} /^SUMMARY: / && show {exit}' "$log" | head -80
}
for kind in "${kinds[@]}"; do
  case "$kind" in
    address)
      # Every library suite, in-process: the parsers with their hostile inputs, the engine,
      # the sampler, the recorders, the audio writers' and decoders' C calls (libsndfile,
      # libvorbisfile, lilv's plugins) and the output destinations.
      # Not the command line's suites (the CLITests target and the three command suites in
      # PlaybackTests): they spawn a tactus process to drive that same library code, and the
      # command line's own unsafe code is three calls (writing standard output, the terminal's
      # termios and its key reads); the plain suite runs them. (Leaving their build out did not
      # shorten this stage measurably in a clean CI run: the two sanitizer builds took 737 s
      # together, against about 730 s before.)
      # Not the real-time JACK suite: under AddressSanitizer's slowdown a client misses periods
      # (seen: a MIDI event one period late), which says nothing about memory; it runs in the
      # plain suite and under PipeWire. Not the soak: ten minutes of output rendering the code
      # the player suites cover.
      # On an optimized build (with -enable-testing for the tests' @testable imports): the
      # sanitizer then slows optimized code instead of debug code. Measured when the suite had
      # 498 tests here: a 413 s build and a 115 s run, against 210 s and 726 s in debug.
      # Assertions (debug only) are checked by the plain suite.
      # Built with only the test targets it runs (TACTUS_TEST_TARGETS, see Package.swift).
      asan_skip="SoakTests|RenderCommandTests|PlayCommandTests|RecordCommandTests|theALSAFilePluginGetsExactlyTheSamplesOfTactusRender"
      asan_targets=$(swift package describe --type json | python3 -c '
import json, sys
print(",".join(t["name"] for t in json.load(sys.stdin)["targets"] if t["type"] == "test" and t["name"] not in ("JACKTests", "CLITests")))')
      echo "== AddressSanitizer (optimized build): the library suites, in-process (not the command line's, the real-time JACK tests or the soak)"
      if ! TACTUS_TEST_TARGETS=$asan_targets swift test -c release -Xswiftc -enable-testing --sanitize=address --scratch-path .build-asan --skip "$asan_skip" 2>&1 | quiet; then
        echo "sanitizers.sh: the suite failed under AddressSanitizer" >&2
        exit 1
      fi
      ;;
    thread)
      # The suites where threads meet: the player's render thread against its control thread,
      # sessions and their backends' threads, recording, the soak's three threads, the MIDI
      # port scheduler and the ALSA drivers. The player suites that render offline on the test's
      # own thread (sample accuracy, schedules, renders, peaks, the limiter, transport, rate,
      # loops, stray note-offs, live edits, chases, tuning, MPE, the WAV writer, stems, journals,
      # the transport and clock followers with simulated time) have no second thread for
      # ThreadSanitizer to watch: the plain suite and AddressSanitizer run them. Nor do the SFZ
      # playback suites, which the filter's "PlaybackTests" would otherwise match. The
      # command-line suites spawn processes whose threads ThreadSanitizer does not follow from
      # here, so they are left to the plain suite too. From the LV2 tests, the two where threads
      # meet: a plugin's worker thread against the audio thread, and catalogues read at once.
      # Optimized, as for AddressSanitizer, and built with only the test targets it runs and
      # what they depend on (TACTUS_TEST_TARGETS, see Package.swift).
      tsan_skip="RenderCommandTests|RecordCommandTests|PlayCommandTests|OfflinePathTests|PlayerDeviceTests|RecordDeviceTests|MIDIPortDeviceTests"
      tsan_skip+="|SampleAccuracyTests|ScheduleTests|\\.RenderTests|RenderPeakTests|LimiterInTheDefaultGraphTests|TransportTests|PlayRateTests"
      tsan_skip+="|TrackLoopAndLiveEditTests|StrayNoteOffTests|LiveEditAtFastRateTests|MPEChaseTests|MPERecordEditTests|TuningChaseTests"
      tsan_skip+="|SystemExclusiveChaseTests|SystemExclusiveDeliveryTests|WAVWriterTests|StemTests|MalformedCaptureTests|JournalSafetyTests"
      tsan_skip+="|MIDITransportFollowerTests|MIDIClockFollowTests"
      echo "== ThreadSanitizer (optimized build): engine, player, session, recording, driver and LV2 worker tests where threads meet"
      if ! TACTUS_TEST_TARGETS=PlaybackTests,ALSATests,LV2Tests TSAN_OPTIONS="halt_on_error=1" swift test -c release -Xswiftc -enable-testing --sanitize=thread --scratch-path .build-tsan --filter "PlaybackTests|ALSATests|LV2WorkerTests|LV2CatalogueConcurrencyTests" \
          --skip "$tsan_skip" 2>&1 | quiet; then
        echo "sanitizers.sh: engine, player or driver tests failed under ThreadSanitizer" >&2
        exit 1
      fi
      ;;
    *) echo "sanitizers.sh: unknown sanitizer '$kind'" >&2; exit 2 ;;
  esac
done
