#!/bin/sh
# Builds libTactusC.so in release mode with the Swift standard library linked in (so it loads
# on a machine without the Swift toolchain), strips it, and copies it and tactus.h into the
# Python package. Prints the library's size. Run from anywhere.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root"
swift build -c release -Xswiftc -static-stdlib --product TactusC
bin=$(swift build -c release -Xswiftc -static-stdlib --show-bin-path)
cp "$bin/libTactusC.so" "$here/tactus/libTactusC.so"
strip --strip-unneeded "$here/tactus/libTactusC.so"
cp "$root/Sources/TactusC/include/tactus.h" "$here/tactus/tactus.h"
# The header is valid C99 and C++ without warnings.
printf '#include "tactus.h"\n' | cc -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only -I "$here/tactus" -x c -
printf '#include "tactus.h"\n' | c++ -Wall -Wextra -Werror -pedantic -fsyntax-only -I "$here/tactus" -x c++ -
# Every function the header declares is exported by the library.
missing=0
for name in $(sed -n 's/^[a-z_0-9 *]*\b\(tactus_[a-z_0-9]*\)(.*/\1/p' "$here/tactus/tactus.h"); do
    if ! nm -D --defined-only "$here/tactus/libTactusC.so" | grep -q " T $name\$"; then
        echo "build.sh: $name is declared in tactus.h but not exported" >&2
        missing=1
    fi
done
[ "$missing" = 0 ]
# Nothing of the Swift toolchain is needed at run time.
if ldd "$here/tactus/libTactusC.so" | grep -q 'libswift\|not found'; then
    ldd "$here/tactus/libTactusC.so" >&2
    echo "build.sh: libTactusC.so needs libraries that a machine without Swift lacks" >&2
    exit 1
fi
echo "libTactusC.so: $(stat -c %s "$here/tactus/libTactusC.so") bytes (stripped)"
