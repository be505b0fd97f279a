#!/bin/sh
# Every public declaration of the library products has a doc comment. DocC does not warn about
# undocumented symbols, so this reads the symbol graphs SwiftPM extracts (public symbols only,
# without the members the compiler synthesizes; an implementation of a protocol requirement
# inherits the requirement's comment) and lists each public symbol without one as
# FILE:LINE: Symbol.path. Exits 1 when there is any. Arguments name modules to check instead
# of the default list. Run from anywhere; CI calls it.
set -eu
cd "$(dirname "$0")/.."
swift package dump-symbol-graph --minimum-access-level public --skip-synthesized-members >/dev/null
graphs="$(swift build --show-bin-path)/../symbolgraph"
[ -d "$graphs" ] || graphs=$(find .build -type d -name symbolgraph | head -n 1)
python3 - "$graphs" "$(pwd)" "$@" <<'PY'
import glob, json, os, sys

graphs, root = sys.argv[1], sys.argv[2]
# The modules of the library products (Package.swift): what users import.
modules = sys.argv[3:] or ["MIDI", "Sequencing", "MIDIFile", "SoundFont", "SFZ", "SFZPlayback", "AudioGraph", "Instruments", "Sampler",
                           "Playback", "Recording", "ALSA", "JACK", "LV2", "AudioFileOutput", "BatchRender", "TactusTestSupport", "Tactus"]
missing = []
for module in modules:
    files = glob.glob(os.path.join(graphs, module + ".symbols.json")) + glob.glob(os.path.join(graphs, module + "@*.symbols.json"))
    if not files:
        sys.exit("doc-coverage: no symbol graph for %s in %s" % (module, graphs))
    for path in files:
        for symbol in json.load(open(path))["symbols"]:
            if symbol.get("docComment") or "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
                continue
            location = symbol.get("location", {})
            uri = location.get("uri", "").replace("file://" + root + "/", "")
            line = location.get("position", {}).get("line", -1) + 1
            missing.append("%s:%d: %s" % (uri, line, ".".join(symbol["pathComponents"])))
for entry in sorted(set(missing)):
    print(entry)
if missing:
    print("doc-coverage: %d public symbols without a doc comment" % len(set(missing)), file=sys.stderr)
    sys.exit(1)
print("doc-coverage: every public symbol of the library products has a doc comment")
PY
