#!/usr/bin/env python3
"""Every dependency line naming our packages, in the README, the guide and the crate docs, must
work when pasted into a new crate: a registry line must name a crate that is ours on crates.io
(or a name of ours that is still free), and a path line must reach our package from a crate
beside the clone (the layout the README describes: this repository cloned as `mcp-tools/`).

`mcp-tools = "0.1"` once sat in the README: crates.io's `mcp-tools` is another project, so the
quick start failed with unresolved imports. This check fails on such a line, saying whose crate
it would get. It asks crates.io (`cargo info`), so it runs in CI (.ci/run), not in `cargo test`.

    python3 scripts/check-dependency-lines.py
"""
import json
import pathlib
import re
import subprocess
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Our publishable packages, from cargo itself: name -> (description, manifest folder).
metadata = json.loads(
    subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
)
OURS = {
    p["name"]: (p["description"] or "", pathlib.Path(p["manifest_path"]).parent)
    for p in metadata["packages"]
    if p.get("publish") != []
}

FILES = [ROOT / "README.md", *sorted((ROOT / "mcp-tools" / "guide").glob("*.md"))]
FILES += sorted((ROOT / "mcp-tools" / "src").rglob("*.rs"))
FILES += sorted((ROOT / "mcp-tools-macros" / "src").rglob("*.rs"))

# `NAME = "VERSION"` or `NAME = { … }` where NAME is one of ours or the name that was wrong.
LINE = re.compile(r'(?<![\w-])(mcp-tools(?:-[a-z]+)?)\s*=\s*("[^"\n]*"|\{[^}\n]*\})')

failures = []
checked = 0
registry = {}


def crates_io(name):
    """(found, description) of a crate on crates.io."""
    if name not in registry:
        out = subprocess.run(["cargo", "info", name], cwd="/", capture_output=True, text=True)
        text = out.stdout + out.stderr
        if out.returncode != 0 and "could not find" in text:
            registry[name] = (False, "")
        elif out.returncode != 0:
            sys.exit(f"cargo info {name} failed (is crates.io reachable?):\n{text}")
        else:
            lines = [l for l in out.stdout.splitlines() if l.strip()]
            # `cargo info` prints the name line, then the description.
            registry[name] = (True, lines[1].strip() if len(lines) > 1 else "")
    return registry[name]


for file in FILES:
    text = file.read_text()
    for number, line in enumerate(text.splitlines(), 1):
        for name, value in LINE.findall(line):
            where = f"{file.relative_to(ROOT)}:{number}"
            try:
                spec = tomllib.loads(f"dep = {value}")["dep"]
            except tomllib.TOMLDecodeError as e:
                failures.append(f"{where}: not a dependency line cargo would read ({e}): {line.strip()}")
                continue
            if isinstance(spec, str):
                spec = {"version": spec}
            package = spec.get("package", name)
            checked += 1
            if "path" in spec:
                # Relative to a crate beside the clone, which is named `mcp-tools`.
                parts = pathlib.PurePosixPath(spec["path"]).parts
                if parts[:2] != ("..", "mcp-tools"):
                    failures.append(f"{where}: path {spec['path']!r} does not start at the clone (../mcp-tools/…)")
                    continue
                folder = ROOT.joinpath(*parts[2:])
                if package not in OURS or OURS[package][1] != folder:
                    failures.append(f"{where}: {name} = {value}: {folder} holds no package named `{package}`")
                continue
            if "git" in spec:
                failures.append(f"{where}: {name} = {value}: the repository has no public git address yet")
                continue
            found, description = crates_io(package)
            if package not in OURS:
                owner = f"crates.io's `{package}` ({description!r}), another project" if found else "nothing"
                failures.append(f"{where}: {name} = {value} would resolve to {owner}, not mcp-tools")
            elif found and description != OURS[package][0]:
                failures.append(
                    f"{where}: {name} = {value}: crates.io's `{package}` is not ours ({description!r})"
                )

if checked == 0:
    sys.exit("no dependency line found: the pattern no longer matches the README")
for failure in failures:
    print(failure, file=sys.stderr)
if failures:
    sys.exit(1)
print(f"{checked} dependency lines checked: each reaches mcp-tools")
