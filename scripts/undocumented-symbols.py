#!/usr/bin/env python3
"""List the public and open symbols of the given modules that have no doc comment.

Usage: scripts/undocumented-symbols.py SYMBOLGRAPH_DIR MODULE...

Reads the symbol graphs `swift package dump-symbol-graph` writes (MODULE.symbols.json and
MODULE@Other.symbols.json, the module's extensions of other modules' types), prints one
line per public or open declaration without a `///` comment (file:line: kind name) and
exits 1 when there is any. Members a type only inherits (default implementations,
synthesized members) are not the module's declarations and are not listed.
"""
import json
import os
import sys
from urllib.parse import unquote, urlparse


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    directory, modules = sys.argv[1], sys.argv[2:]
    root = os.getcwd()
    findings = []
    counted = 0
    for module in modules:
        files = [f for f in sorted(os.listdir(directory))
                 if f == f"{module}.symbols.json" or f.startswith(f"{module}@")]
        if not any(f == f"{module}.symbols.json" for f in files):
            print(f"error: no symbol graph for {module} in {directory}", file=sys.stderr)
            return 2
        for name in files:
            with open(os.path.join(directory, name)) as handle:
                graph = json.load(handle)
            for symbol in graph.get("symbols", []):
                if symbol.get("accessLevel") not in ("public", "open"):
                    continue
                if "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
                    continue
                kind = symbol["kind"]["identifier"]
                if kind.endswith(".extension"):  # extension blocks themselves
                    continue
                location = symbol.get("location")
                if location is None:  # implicit members the compiler writes
                    continue
                counted += 1
                lines = (symbol.get("docComment") or {}).get("lines") or []
                if any(line.get("text", "").strip() for line in lines):
                    continue
                path = unquote(urlparse(location["uri"]).path)
                path = os.path.relpath(path, root)
                line = location["position"]["line"] + 1
                title = ".".join(symbol["pathComponents"])
                findings.append((path, line, kind.split(".")[-1], module, title))
    for path, line, kind, module, title in sorted(set(findings)):
        print(f"{path}:{line}: {kind} {module}.{title} has no doc comment")
    undocumented = len(set(findings))
    print(f"{undocumented} of {counted} public symbols of {', '.join(modules)} "
          f"have no doc comment", file=sys.stderr)
    return 1 if undocumented else 0


if __name__ == "__main__":
    sys.exit(main())
