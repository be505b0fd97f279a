#!/bin/sh
# Builds the examples against the repository's products, runs each one offline and checks
# what it must show; CI calls this. Run from anywhere; outputs go to a temporary directory.
set -eu
cd "$(dirname "$0")"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The examples build in the repository's own build folder, which already holds the library's
# modules after a `swift build` or `swift test` there: a few seconds instead of a second build
# of the whole library (CI measured 15 s against about 200 s).
# TACTUS_EXAMPLES_BUILD adds build flags (CI passes its release flags, "-c release -Xswiftc
# -static-stdlib", to reuse the release build its Python and VM stages made).
scratch=../.build
flags=${TACTUS_EXAMPLES_BUILD:-}
# shellcheck disable=SC2086 # the flags are words
swift build $flags --scratch-path "$scratch"
# shellcheck disable=SC2086
bin=$(swift build $flags --scratch-path "$scratch" --show-bin-path)
run() { echo "== $*"; "$bin/$@"; }
# expect MESSAGE COMMAND...: prints ok or FAIL and stops at the first failure.
expect() {
    message=$1; shift
    if "$@"; then echo "ok   $message"; else echo "FAIL $message"; exit 1; fi
}

run subtractive-synth "$out/subtractive.wav"
run example-checks sweep "$out/subtractive.wav" "$out/subtractive.wav.points"

run fm-synth "$out/fm.wav"
run example-checks fm "$out/fm.wav"

run tone-generator "$out/tone.wav"
run example-checks clicks "$out/tone.wav"

run comb-filter "$out/comb-512.wav" 512
run comb-filter "$out/comb-61.wav" 61
run example-checks audible "$out/comb-512.wav"
expect "comb-filter: bit-identical at block sizes 512 and 61" cmp "$out/comb-512.wav" "$out/comb-61.wav"

run score-render "$out/score-512.wav" 512
run score-render "$out/score-100.wav" 100
run example-checks audible "$out/score-512.wav"
expect "score-render: bit-identical at block sizes 512 and 100" cmp "$out/score-512.wav" "$out/score-100.wav"
echo 'i 9 0 1 8.00 0.5' > "$out/bad.sco"
if "$bin/score-render" "$out/bad.wav" 512 "$out/bad.sco" 2>"$out/err"; then echo "FAIL score-render accepted a bad score"; exit 1; fi
expect "score-render: a bad score line is one error line with the path" grep -q "bad.sco: line 1: no instrument 9" "$out/err"

run sampler-sequence "$out/sampler.wav" > "$out/sampler.txt"
cat "$out/sampler.txt"
run example-checks audible "$out/sampler.wav"
expect "sampler-sequence: 8 bar events, each once, in order with its tick" \
    test "$(grep -c '^bar [1-8] at tick' "$out/sampler.txt")" = 8

run lv2-instrument "$out/lv2-512.wav" 512
run lv2-instrument "$out/lv2-65.wav" 65
run example-checks audible "$out/lv2-512.wav"
expect "lv2-instrument: bit-identical at block sizes 512 and 65" cmp "$out/lv2-512.wav" "$out/lv2-65.wav"
run lv2-instrument "$out/lv2-still.wav" 512 still
expect "lv2-instrument: the automation changes the sound (a render without it differs)" sh -c "! cmp -s '$out/lv2-512.wav' '$out/lv2-still.wav'"

# record: the demo player's eighth notes over morning-steps, quantized, after a count-in.
echo "== record"
(cd .. && "$bin/record" "$out/take.mid" 3) > "$out/record.txt"
cat "$out/record.txt"
expect "record: the take is written, its journal gone" test -f "$out/take.mid" -a ! -e "$out/take.mid.journal"
expect "record: every note played is in a new track after the backing's, on consecutive eighths, in the arpeggio's order" \
    python3 - "$out/take.mid" "$(grep -c '^note ' "$out/record.txt")" <<'PY'
import sys, mido
song = mido.MidiFile(sys.argv[1])
backing = mido.MidiFile("../Songs/morning-steps.mid")
assert len(song.tracks) == len(backing.tracks) + 1, (len(song.tracks), len(backing.tracks))
tick, notes = 0, []
for message in song.tracks[-1]:
    tick += message.time
    if message.type == "note_on" and message.velocity > 0:
        notes.append((tick, message.note))
printed = int(sys.argv[2])
assert len(notes) == printed and printed >= 8, (notes, printed)
eighth = song.ticks_per_beat // 2
assert notes == [(i * eighth, [60, 64, 67, 72][i % 4]) for i in range(len(notes))], notes
PY

run time-and-tempo > "$out/time.txt"
cat "$out/time.txt"
expect "time-and-tempo: bar 5 beat 2 in ticks, beats, seconds and frames" \
    grep -qx 'bar 5 beat 2: tick 16320, 17.0 beats, 9.4 s, frame 451200 at 48 kHz' "$out/time.txt"
expect "time-and-tempo: seconds back to bar:beat:tick" grep -qx '9.4 s is tick 16320, at 5:2:0' "$out/time.txt"
expect "time-and-tempo: typed positions" test "$(grep -c -- '-> tick 16320$' "$out/time.txt")" = 3
expect "time-and-tempo: 1,000 tempo changes land on the closed form" \
    sh -c "grep '^after 1,000' '$out/time.txt' | awk '{ exit !(\$6 == \$9 \",\") }'"

# The custom instruments and effect pass the allocation-free render check.
# In the plain debug configuration whatever the flags: swift-testing has no static build.
swift test --scratch-path "$scratch"
echo "all example checks passed"
