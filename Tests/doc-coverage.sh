#!/bin/sh
# Every public declaration of the library products has a doc comment, and every public function
# that throws says what it throws. DocC does not warn about undocumented symbols, so this reads
# the symbol graphs SwiftPM extracts (public symbols only, without the members the compiler
# synthesizes; an implementation of a protocol requirement inherits the requirement's comment)
# and lists each public symbol without a comment, and each with an untyped `throws` (`rethrows`
# passes: it throws only what its closure does), as FILE:LINE: Symbol.path. Exits 1 when there
# is any. Arguments name modules to check instead of the default list. Run from anywhere; CI
# calls it.
set -eu
cd "$(dirname "$0")/.."
swift package dump-symbol-graph --minimum-access-level public --skip-synthesized-members >/dev/null
graphs="$(swift build --show-bin-path)/../symbolgraph"
[ -d "$graphs" ] || graphs=$(find .build -type d -name symbolgraph | head -n 1)
LIBRARY_MODULES=$(python3 Tests/modules.py list) python3 - "$graphs" "$(pwd)" "$@" <<'PY'
import glob, json, os, sys

graphs, root = sys.argv[1], sys.argv[2]
# The modules of the library products, as Tests/modules.py derives them from Package.swift.
modules = sys.argv[3:] or os.environ["LIBRARY_MODULES"].split()
missing = []
untyped = []
def location_of(symbol):
    location = symbol.get("location", {})
    uri = location.get("uri", "").replace("file://" + root + "/", "")
    line = location.get("position", {}).get("line", -1) + 1
    return "%s:%d: %s" % (uri, line, ".".join(symbol["pathComponents"]))
def throws_untyped(symbol):
    # Functions and initializers only (a closure-typed property is the caller's closure), and
    # only the declaration's own effect: a `throws` inside parentheses belongs to a closure
    # parameter. Codable's requirements cannot choose their error type.
    if symbol["kind"]["identifier"] not in ("swift.func", "swift.method", "swift.init", "swift.type.method", "swift.func.op"):
        return False
    if symbol["pathComponents"][-1] in ("init(from:)", "encode(to:)"):
        return False
    fragments = symbol.get("declarationFragments", [])
    depth = 0
    for i, fragment in enumerate(fragments):
        if fragment["kind"] == "text":
            depth += fragment["spelling"].count("(") - fragment["spelling"].count(")")
        elif depth == 0 and fragment["kind"] == "keyword" and fragment["spelling"] == "throws":
            following = fragments[i + 1]["spelling"] if i + 1 < len(fragments) else ""
            if not following.startswith("("):
                return True
    return False
for module in modules:
    files = glob.glob(os.path.join(graphs, module + ".symbols.json")) + glob.glob(os.path.join(graphs, module + "@*.symbols.json"))
    if not files:
        sys.exit("doc-coverage: no symbol graph for %s in %s" % (module, graphs))
    for path in files:
        for symbol in json.load(open(path))["symbols"]:
            if "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
                continue
            if throws_untyped(symbol):
                untyped.append(location_of(symbol))
            if not symbol.get("docComment"):
                missing.append(location_of(symbol))
for entry in sorted(set(missing)):
    print(entry)
for entry in sorted(set(untyped)):
    print(entry + " throws an untyped error")
if missing:
    print("doc-coverage: %d public symbols without a doc comment" % len(set(missing)), file=sys.stderr)
if untyped:
    print("doc-coverage: %d public functions with an untyped throws" % len(set(untyped)), file=sys.stderr)
if missing or untyped:
    sys.exit(1)
print("doc-coverage: every public symbol of the library products has a doc comment, and every public function that throws has a typed throws")
PY
