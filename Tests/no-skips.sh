#!/usr/bin/env bash
# Fails when a `swift test` log shows a skipped test, except the real-kernel suites that run
# inside the QEMU VM. CI installs every outside tool, library and file the tests use, so there
# a skip means something is missing that should not be. Usage: Tests/no-skips.sh LOG
set -euo pipefail
log=$1
skipped=$(grep -E "(Test|Suite) .* skipped(\.|:)" "$log" | grep -v "runs inside the QEMU VM" || true)
if [ -n "$skipped" ]; then
  echo "tests skipped where everything they need should be installed:"
  printf '%s\n' "$skipped" | sed 's/^/  /'
  exit 1
fi
echo "no test skipped (the VM-only suites run in Tests/VM/run-vm-tests.sh)"
