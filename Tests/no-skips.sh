#!/usr/bin/env bash
# Fails when a `swift test` log shows a skipped test, except the suites other scripts run: the
# real-kernel ones inside the QEMU VM, and the PipeWire one under pw-jack. CI installs every outside tool, library and file the tests use, so there
# a skip means something is missing that should not be. Usage: Tests/no-skips.sh LOG
set -euo pipefail
log=$1
skipped=$(grep -E "(Test|Suite) .* skipped(\.|:)" "$log" | grep -v -e "runs inside the QEMU VM" -e "runs under pw-jack" || true)
if [ -n "$skipped" ]; then
  echo "tests skipped where everything they need should be installed:"
  printf '%s\n' "$skipped" | sed 's/^/  /'
  exit 1
fi
echo "no test skipped (the VM suites run in Tests/VM/run-vm-tests.sh, the PipeWire one in Tests/JACK/pipewire.sh)"
