#!/bin/sh
# Builds the example programs and runs each offline (no sound card), checking its output.
# CI calls this; it needs the Tactus package one directory up.
set -eu
examples=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$examples")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
fail() { echo "run-examples: $*" >&2; exit 1; }

# In the repository's build folder, beside the library's modules, with TACTUS_EXAMPLES_BUILD's
# flags if any (see check-examples.sh). A debug build renders hello's 43 s song in about 45 s,
# twice; CI's release build in a few.
flags=${TACTUS_EXAMPLES_BUILD:-}
# shellcheck disable=SC2086 # the flags are words
(cd "$examples" && swift build -q $flags --scratch-path "$root/.build")
# shellcheck disable=SC2086
bin=$(cd "$examples" && swift build $flags --scratch-path "$root/.build" --show-bin-path)
# shellcheck disable=SC2086
(cd "$root" && swift build -q $flags --product tactus)
# shellcheck disable=SC2086
tactus="$(cd "$root" && swift build $flags --show-bin-path)/tactus"
unset TACTUS_SOUNDFONT

# hello: without a device it writes morning-steps.wav, which must hold exactly what
# `tactus render` makes of the song with the same (automatic) instrument.
mkdir -p "$work/hello/Songs"
cp "$root/Songs/morning-steps.mid" "$work/hello/Songs/"
(cd "$work/hello" && "$bin/hello" >out.txt 2>err.txt) || { cat "$work/hello/err.txt" >&2; fail "hello failed"; }
grep -q '^played [0-9.]* seconds$' "$work/hello/out.txt" || fail "hello: unexpected output: $(cat "$work/hello/out.txt")"
if grep -q 'writing morning-steps.wav instead' "$work/hello/out.txt"; then
    # An offline session ends as render does by default: when the sound has died away.
    "$tactus" render "$work/hello/Songs/morning-steps.mid" -o "$work/hello/reference.wav" >/dev/null
    cmp -s "$work/hello/morning-steps.wav" "$work/hello/reference.wav" \
        || fail "hello: morning-steps.wav differs from tactus render's"
    echo "hello: ok (no device; the WAV equals tactus render's)"
else
    echo "hello: ok (played on the default device)"
fi
