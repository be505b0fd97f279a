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
quiet() { grep -vE "Cannot export local symbol|^\[[0-9]+/[0-9]+\]" || true; }
for kind in "${kinds[@]}"; do
  case "$kind" in
    address)
      echo "== AddressSanitizer: the whole suite"
      swift test --sanitize=address --scratch-path .build-asan 2>&1 | quiet | tail -40 || { echo "sanitizers.sh: address failed" >&2; exit 1; }
      ;;
    thread)
      echo "== ThreadSanitizer: engine, player and driver tests"
      TSAN_OPTIONS="halt_on_error=1" swift test --sanitize=thread --scratch-path .build-tsan --filter "PlaybackTests|ALSATests" 2>&1 | quiet | tail -40 || { echo "sanitizers.sh: thread failed" >&2; exit 1; }
      ;;
    *) echo "sanitizers.sh: unknown sanitizer '$kind'" >&2; exit 2 ;;
  esac
done
