#!/usr/bin/env bash
# Builds the libFuzzer targets (with AddressSanitizer) and runs each for a given time.
# Usage: Fuzz/run.sh [SECONDS] [TARGET...]   (default 60 s, every target)
#        FUZZ_RUNS=1000000 Fuzz/run.sh 0 [TARGET...]   (a number of executions instead of a time)
#        FUZZ_MAX_LEN=4096 ... (the largest input tried; default 65536, libFuzzer's own is 4096)
#        FUZZ_CONFIGURATION=debug ... (a debug build: about a third of the release build's
#        compile time and several times slower per execution, for CI's short smoke runs)
# Prints each target's executions and exits 1 when a target finds a crash, leaving the input in
# Fuzz/findings/TARGET/ (also 1, said as such, when a fuzzer is killed from outside or stops
# without saving an input; 2 when the targets do not build). Seeds come from Songs/, ../shared/corpus/files and
# Fuzz/seeds/ (fuzz-sf2, fuzz-sf3 and fuzz-dls start from the small hand-built banks in Fuzz/seeds/;
# fuzz-sfz and fuzz-sfz-play from sfizz's test files in ../shared/sfz; fuzz-journal from the
# hand-built journals in Fuzz/seeds/).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz-smf fuzz-bytestream fuzz-json fuzz-positions fuzz-sf2 fuzz-sf3 fuzz-dls fuzz-sfz fuzz-sfz-play fuzz-journal)
shared=${TACTUS_SHARED:-$root/../shared}

cd "$here"
# Leaks inside system libraries Tactus cannot fix are listed (with why) in lsan.supp.
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# `--sanitize fuzzer` makes SwiftPM link libFuzzer's main; the joined -sanitize=fuzzer,address
# is what instruments: the Swift driver forwards only the last of several -sanitize flags to
# the compiler, so `--sanitize fuzzer --sanitize address` builds without coverage counters.
build=(swift build -c "${FUZZ_CONFIGURATION:-release}" --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address)
# The build's chatter is filtered, its status is not: a target that did not build must not be
# reported as a finding.
if ! "${build[@]}" > "${TMPDIR:-/tmp}/tactus-fuzz-build.$$" 2>&1; then
  grep -vE "Cannot export local symbol|^\[|^Building" "${TMPDIR:-/tmp}/tactus-fuzz-build.$$" >&2
  rm -f "${TMPDIR:-/tmp}/tactus-fuzz-build.$$"
  echo "Fuzz/run.sh: the fuzz targets did not build" >&2
  exit 2
fi
grep -vE "Cannot export local symbol|^\[|^Building|^Build complete" "${TMPDIR:-/tmp}/tactus-fuzz-build.$$" || true
rm -f "${TMPDIR:-/tmp}/tactus-fuzz-build.$$"
bin=$("${build[@]}" --show-bin-path)
work=$(mktemp -d /tmp/tactus-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT

seed() {  # seed TARGET DIR: the starting corpus of a target
  local target=$1 dir=$2
  mkdir -p "$dir"
  case "$target" in
    fuzz-smf)
      cp "$root"/Songs/*.mid "$dir"/ 2>/dev/null || true
      [ -d "$shared/corpus/files" ] && find "$shared/corpus/files" -type f \( -name '*.mid' -o -name '*.rmi' -o -name '*.midi2' \) -size -64k -exec cp {} "$dir"/ \; || true
      ;;
    fuzz-sfz|fuzz-sfz-play)
      [ -d "$shared/sfz" ] && find "$shared/sfz" -type f -name '*.sfz' -size -64k -exec cp --backup=numbered {} "$dir"/ \; || true
      ;;
    fuzz-json)
      for f in "$root"/Songs/click-track.mid "$root"/Songs/little-waltz.mid; do
        "$root/.build/debug/tactus" dump --json --full "$f" > "$dir/$(basename "$f").json" 2>/dev/null || true
      done
      ;;
  esac
  [ -d "$here/seeds/$target" ] && cp "$here/seeds/$target"/* "$dir"/ 2>/dev/null || true
  return 0
}

status=0
for target in "${targets[@]}"; do
  corpus="$work/$target"
  seed "$target" "$corpus"
  findings="$here/findings/$target"
  mkdir -p "$findings"
  log="$work/$target.log"
  if [ -n "${FUZZ_RUNS:-}" ]; then budget=(-runs="$FUZZ_RUNS"); else budget=(-max_total_time="$seconds"); fi
  started=$(date +%s)
  if "$bin/$target" "$corpus" "${budget[@]}" -max_len="${FUZZ_MAX_LEN:-65536}" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="$findings/" -print_final_stats=1 > "$log" 2>&1; then
    runs=$(grep -E "stat::number_of_executed_units" "$log" | awk '{print $2}')
    coverage=$(grep -oE "DONE +cov: [0-9]+ ft: [0-9]+ corp: [0-9]+" "$log" | tail -1 | sed -E 's/DONE +//')
    if ! grep -q "INITED cov:" "$log"; then
      # A fuzzer without coverage feedback is a random-input test: report it as a failure.
      status=1
      echo "$target: built without coverage instrumentation (no 'INITED cov:' in libFuzzer's log)"
      continue
    fi
    echo "$target: ${runs:-?} executions in $(( $(date +%s) - started )) s, ${coverage:-coverage ?}, no finding"
  else
    exit_status=$?
    status=1
    # A finding is an input libFuzzer saved; a fuzzer stopped from outside (the machine's OOM
    # killer, a CI timeout, kill) saved none and says nothing about the code.
    if grep -q "Test unit written to" "$log"; then
      echo "$target: FINDING (input saved in $findings)"
      grep -E "ERROR|Fatal error|==ERROR|SUMMARY|fatalError|Test unit written" "$log" | head -20
    elif [ "$exit_status" -gt 128 ]; then
      echo "$target: stopped by signal $((exit_status - 128)) after $(( $(date +%s) - started )) s, before its budget ran out; no input saved, no finding"
    else
      echo "$target: the fuzzer exited with status $exit_status without saving an input; the end of its log:"
      tail -5 "$log"
    fi
  fi
done
rmdir "$here/findings"/* "$here/findings" 2>/dev/null || true
exit $status
