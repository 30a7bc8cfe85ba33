#!/usr/bin/env python3
"""List the public and open symbols of the given modules that have no doc comment.

Usage: scripts/undocumented-symbols.py [--tags] SYMBOLGRAPH_DIR MODULE...

Reads the symbol graphs `swift package dump-symbol-graph` writes (MODULE.symbols.json and
MODULE@Other.symbols.json, the module's extensions of other modules' types), prints one
line per public or open declaration without a `///` comment (file:line: kind name) and
exits 1 when there is any. Members a type only inherits (default implementations,
synthesized members) are not the module's declarations and are not listed.

With --tags, also lists the documented functions, initializers and subscripts whose
comment lacks a `- Parameter(s):` (when every parameter has a name to document), a
`- Throws:` (when it throws) or a `- Returns:` (when it returns a value), as
scripts/check-docs does.
"""
import json
import os
import sys
from urllib.parse import unquote, urlparse


def main() -> int:
    arguments = sys.argv[1:]
    tags = "--tags" in arguments
    arguments = [a for a in arguments if a != "--tags"]
    if len(arguments) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    directory, modules = arguments[0], arguments[1:]
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
                text = "\n".join(line.get("text", "") for line in lines)
                if text.strip():
                    missing = missing_tags(symbol, text) if tags else []
                    if not missing:
                        continue
                    problem = "has no " + ", no ".join(missing)
                else:
                    problem = "has no doc comment"
                path = unquote(urlparse(location["uri"]).path)
                path = os.path.relpath(path, root)
                line = location["position"]["line"] + 1
                title = ".".join(symbol["pathComponents"])
                findings.append((path, line, kind.split(".")[-1], module, title, problem))
    for path, line, kind, module, title, problem in sorted(set(findings)):
        print(f"{path}:{line}: {kind} {module}.{title} {problem}")
    undocumented = len(set(findings))
    what = "have no doc comment" + (" or miss a tag" if tags else "")
    print(f"{undocumented} of {counted} public symbols of {', '.join(modules)} {what}", file=sys.stderr)
    return 1 if undocumented else 0


def missing_tags(symbol, text):
    """The `- Parameter`, `- Throws`, `- Returns` tags a function's comment should have."""
    kind = symbol["kind"]["identifier"].split(".")[-1]
    if kind not in ("func", "method", "init", "subscript", "op"):
        return []
    signature = symbol.get("functionSignature") or {}
    parameters = signature.get("parameters") or []
    declaration = "".join(f.get("spelling", "") for f in symbol.get("declarationFragments", []))
    returns = "".join(f.get("spelling", "") for f in signature.get("returns") or [])
    missing = []
    if parameters and all(p.get("name", "_") != "_" for p in parameters) and "- Parameter" not in text:
        missing.append("- Parameters:")
    if (" throws" in declaration or "throws(" in declaration) and "- Throws" not in text:
        missing.append("- Throws:")
    if kind not in ("init",) and returns not in ("", "()", "Void") and "- Returns" not in text:
        missing.append("- Returns:")
    return missing


if __name__ == "__main__":
    sys.exit(main())
