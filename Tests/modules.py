#!/usr/bin/env python3
"""The library's module list, declared once in Package.swift and derived from it here.

The library modules are the umbrella target `Tactus`, the modules it depends on (what
`import Tactus` brings), and the modules of the other library products (`TactusTestSupport`,
the C interface...) that are Swift targets of this package.

    python3 Tests/modules.py list         the modules, one a line
    python3 Tests/modules.py catalogs     those with a DocC catalog (CI builds their documentation)
    python3 Tests/modules.py check        fails when Sources/Tactus/Exports.swift or the README's
                                          layout table disagree with Package.swift
"""
import json, os, re, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def package():
    out = subprocess.run(["swift", "package", "dump-package"], cwd=root, capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def dependency_names(target):
    names = []
    for dependency in target.get("dependencies", []):
        # {"byName": ["MIDI", null]}, {"target": ["MIDI", null]} or {"product": [...]}
        for kind in ("byName", "target"):
            if kind in dependency:
                names.append(dependency[kind][0])
    return names


def library_modules(manifest):
    targets = {t["name"]: t for t in manifest["targets"]}
    swift = {name for name, t in targets.items() if os.path.isdir(os.path.join(root, "Sources", name))
             and any(f.endswith(".swift") for _, _, files in os.walk(os.path.join(root, "Sources", name)) for f in files)}
    modules = ["Tactus"] + [d for d in dependency_names(targets["Tactus"]) if d in swift]
    for product in manifest["products"]:
        if "library" not in product["type"]:
            continue
        for name in product["targets"]:
            if name in swift and name not in modules and name != "Tactus":
                # Products that group umbrella modules (TactusCore, TactusAudio...) add nothing new;
                # separate products (TactusTestSupport, the C interface) do.
                modules.append(name)
    return modules


def main():
    command = sys.argv[1] if len(sys.argv) > 1 else "list"
    manifest = package()
    modules = library_modules(manifest)
    if command == "list":
        print("\n".join(modules))
    elif command == "catalogs":
        print("\n".join(m for m in modules if os.path.isdir(os.path.join(root, "Sources", m, m + ".docc"))))
    elif command == "check":
        problems = []
        targets = {t["name"]: t for t in manifest["targets"]}
        umbrella = set(dependency_names(targets["Tactus"]))
        exports = open(os.path.join(root, "Sources/Tactus/Exports.swift")).read()
        exported = set(re.findall(r"^@_exported import (\w+)", exports, re.M))
        for name in sorted(umbrella - exported):
            problems.append("Sources/Tactus/Exports.swift does not export %s, a dependency of the umbrella" % name)
        for name in sorted(exported - umbrella):
            problems.append("Sources/Tactus/Exports.swift exports %s, which the umbrella target does not depend on" % name)
        readme = open(os.path.join(root, "README.md")).read()
        layout = set(re.findall(r"^\| `(\w+)`", readme, re.M))
        for name in modules:
            if name not in layout:
                problems.append("README.md's layout table has no row for the library module %s" % name)
        for problem in problems:
            print("modules.py: " + problem, file=sys.stderr)
        if problems:
            sys.exit(1)
        print("modules.py: Exports.swift and the README's layout table agree with Package.swift (%d library modules)" % len(modules))
    else:
        sys.exit(__doc__)


main()
