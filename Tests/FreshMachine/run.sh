#!/usr/bin/env bash
# The fresh-machine promise, checked: in a clean clone of the committed tree, with ALSA's
# headers and library, libsmf, the SoundFonts, mido and the outside tools hidden in a private
# mount namespace, the README's first two commands succeed, `tactus play` and `tactus ports`
# say in one line which library is missing, and the tests that need a hidden tool say so.
#
# Usage: Tests/FreshMachine/run.sh [--keep]   (root; util-linux unshare and overlayfs)
#        TACTUS_FRESH_CLONE=DIR Tests/FreshMachine/run.sh   clones into DIR (which must not exist)
#        and leaves it there, built and tested, for CI's later stages to reuse its build.
#        TACTUS_FRESH_XUNIT=F adds `--xunit-output F` to the README's test command (CI's
#        next stage reads F-swift-testing.xml to run only what was skipped here).
# Exit: 0 when every check held, 1 when one failed, 77 when it cannot run here (not root).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
keep=${1:-}

if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
  echo "fresh-machine check skipped: needs root and unshare (a private mount namespace hides the installed packages)"
  exit 77
fi

if [ "${TACTUS_FRESH_INSIDE:-}" != 1 ]; then
  work=$(mktemp -d /tmp/tactus-fresh.XXXXXX)
  trap '[ "$keep" = --keep ] || rm -rf "$work"' EXIT
  git -C "$repo" rev-parse HEAD >/dev/null
  TACTUS_FRESH_INSIDE=1 TACTUS_FRESH_WORK="$work" TACTUS_FRESH_REPO="$repo" TACTUS_FRESH_CLONE="${TACTUS_FRESH_CLONE:-}" TACTUS_FRESH_XUNIT="${TACTUS_FRESH_XUNIT:-}" unshare -m bash "$0" "$@"
  exit $?
fi

work=$TACTUS_FRESH_WORK
mount --make-rprivate /
layer=0

# Hides files by laying an overlay on their folder and deleting them there (whiteouts), so the
# dynamic loader, compilers and `command -v` see a machine where they were never installed.
hide_files() {
  local dir=$1; shift
  [ -d "$dir" ] || return 0
  local present=()
  for name in "$@"; do
    for path in "$dir"/$name; do [ -e "$path" ] || [ -L "$path" ] && present+=("$path"); done
  done
  [ ${#present[@]} -gt 0 ] || return 0
  layer=$((layer + 1))
  mkdir -p "$work/overlay/$layer/upper" "$work/overlay/$layer/work"
  mount -t overlay overlay -o "lowerdir=$dir,upperdir=$work/overlay/$layer/upper,workdir=$work/overlay/$layer/work" "$dir"
  rm -rf "${present[@]}"
}

# Hides a whole folder behind an empty one.
hide_dir() { [ -d "$1" ] && mount -t tmpfs -o size=1m,mode=755 tmpfs "$1" || true; }

lib=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
hide_files /usr/include smf.h jack sndfile.h vorbis fluidsynth fluidsynth.h libinstpatch-2
hide_files "$lib" 'libasound.so*' 'libsmf.so*' 'libjack.so*' 'libjackserver.so*' 'libvorbisfile.so*' 'libsndfile.so*' 'libfluidsynth.so*' 'liblilv-0.so*'
hide_files "$lib/pkgconfig" alsa.pc smf.pc jack.pc sndfile.pc vorbisfile.pc fluidsynth.pc
hide_files /usr/bin fluidsynth arecord aplay arecordmidi aplaymidi aconnect amidi jackd sf3convert flac oggdec oggenc sox pw-jack pipewire 'qemu-system-*' parallel lv2ls lv2info lv2apply
# Folders last: an overlay laid on their parent afterwards would show them again.
hide_dir /usr/include/alsa
hide_dir /usr/share/alsa
hide_dir /usr/share/sounds
hide_dir /usr/lib/lv2
for module in mido numpy scipy; do
  path=$(python3 -c "import $module, os; print(os.path.dirname($module.__file__))" 2>/dev/null) || continue
  hide_dir "$path"
done

failed=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; failed=1; fi; }

# What a new user has: a clone, nothing beside it.
clone=${TACTUS_FRESH_CLONE:-}
[ -n "$clone" ] || clone=$work/clone/tactus
git clone -q "$TACTUS_FRESH_REPO" "$clone"
cd "$clone"
check "libasound is out of reach" "! python3 -c 'import ctypes; ctypes.CDLL(\"libasound.so.2\")' 2>/dev/null"
check "ALSA's headers are out of reach" "[ ! -e /usr/include/alsa/asoundlib.h ]"

# The README's first two commands, verbatim.
mapfile -t commands < <(awk '/^```/{block++; next} block==1' README.md)
[ ${#commands[@]} -eq 2 ] || { echo "FAILED: the README's first block should hold exactly two commands, found ${#commands[@]}"; exit 1; }
echo "README command 1: ${commands[0]}"
check "the README's first command renders a song" "bash -c '${commands[0]}' > '$work/first.log' 2>&1 || { tail -20 '$work/first.log'; false; }"
wav=$(echo "${commands[0]}" | sed -n 's/.* -o \([^ ]*\).*/\1/p')
check "it wrote $wav with sound in it" "[ -s '$wav' ] && [ \$(stat -c %s '$wav') -gt 1000000 ] && grep -q 'peak' '$work/first.log'"

tactus=$(swift build --show-bin-path)/tactus
one_line() { # command, expected exit, pattern
  local out status=0
  out=$("$tactus" "${@:3}" 2>&1 >/dev/null) || status=$?
  echo "  tactus ${*:3} -> exit $status: $out"
  [ "$status" = "$1" ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && printf '%s' "$out" | grep -q "$2"
}
check "play says in one line that libasound2 is missing (exit 69)" "one_line 69 'install the package libasound2' play Songs/morning-steps.mid"
check "ports says the same (exit 69)" "one_line 69 'install the package libasound2' ports"
check "record says the same (exit 69)" "one_line 69 'install the package libasound2' record -o '$work/take.mid' --duration 1"

echo "README command 2: ${commands[1]}"
# With TACTUS_FRESH_XUNIT=F the command also writes swift-testing's xUnit report (to
# F-swift-testing.xml), from which CI's next stage runs only the tests skipped here.
second=${commands[1]}
[ -z "${TACTUS_FRESH_XUNIT:-}" ] || second+=" --xunit-output '$TACTUS_FRESH_XUNIT'"
check "the README's second command passes" "bash -c \"\$second\" > '$work/second.log' 2>&1 || { grep -E '✘|error:' '$work/second.log' | head -40; false; }"
grep -E "Test run with|passed after|failed after" "$work/second.log" | tail -1
skips=$(grep -E "(Test|Suite) .* skipped(\.|:)" "$work/second.log" | sed 's/^ *//' || true)
echo "skipped on a fresh machine, each with its reason:"
printf '%s\n' "$skips" | sed 's/^/  /'
check "every skip says why" "! printf '%s\n' \"\$skips\" | grep -Eq 'skipped\.\$'"
exit $failed
