#!/usr/bin/env python3
"""check_layers.py — no lower layer of src/ may reference a higher one.

Reads the library's object files (one per source file, under the build tree's
tessera_obj target), maps every defined global symbol to the layer of the
folder that defines it, and reports each undefined reference whose definition
lives in a layer the referencing file may not call.  The allowed directions
are DESIGN.md §5's:

    core < comm < table < sched < ckpt      tick, tile: core, comm, table, sched
    runtime (src/runtime.c): everything

Usage: check_layers.py BUILD_DIR   (exit 0: clean, 1: upward references, 2: usage)
"""
import os
import subprocess
import sys

# The layers each layer may reference (besides itself).
ALLOWED = {
    "core": set(),
    "comm": {"core"},
    "table": {"core", "comm"},
    "sched": {"core", "comm", "table"},
    "ckpt": {"core", "comm", "table", "sched"},
    "tick": {"core", "comm", "table", "sched"},
    "tile": {"core", "comm", "table", "sched"},
    "runtime": {"core", "comm", "table", "sched", "ckpt", "tick", "tile"},
}


def layer_of(obj_path):
    """The layer of an object file: its folder under src/, or 'runtime'."""
    parts = obj_path.split(os.sep)
    i = len(parts) - 1 - parts[::-1].index("src")
    rest = parts[i + 1:]
    return rest[0] if len(rest) > 1 else "runtime"


def symbols(obj):
    """(defined, undefined) global symbol sets of one object file."""
    out = subprocess.run(["nm", "-g", "--defined-only", obj], capture_output=True,
                         text=True, check=True).stdout
    defined = {line.split()[-1] for line in out.splitlines() if line.strip()}
    out = subprocess.run(["nm", "-g", "--undefined-only", obj], capture_output=True,
                         text=True, check=True).stdout
    undefined = {line.split()[-1] for line in out.splitlines() if line.strip()}
    return defined, undefined


def find_objects(build, source):
    """The objects of the library whose source still exists (a renamed or
    removed file leaves its old object behind in the build tree)."""
    root = os.path.join(build, "CMakeFiles", "tessera_obj.dir")
    objs = []
    for d, _, files in os.walk(root):
        for f in files:
            obj = os.path.join(d, f)
            if f.endswith(".o") and os.path.exists(os.path.join(source, os.path.relpath(obj, root)[:-2])):
                objs.append(obj)
    return sorted(objs)


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    objs = find_objects(argv[1], source)
    if not objs:
        print(f"check_layers: no object files under {argv[1]} (build first)", file=sys.stderr)
        return 2
    owner, refs = {}, {}
    for o in objs:
        defined, undefined = symbols(o)
        name = os.path.relpath(o, argv[1]).split("tessera_obj.dir" + os.sep)[-1]
        for s in defined:
            owner[s] = (layer_of(o), name)
        refs[name] = (layer_of(o), undefined)
    layers = sorted({v[0] for v in owner.values()} | {v[0] for v in refs.values()})
    unknown = [l for l in layers if l not in ALLOWED]
    if unknown:
        print(f"check_layers: layers with no rule: {', '.join(unknown)}", file=sys.stderr)
        return 1
    bad = []
    for name, (layer, undefined) in sorted(refs.items()):
        for s in sorted(undefined):
            if s not in owner:
                continue
            to_layer, to_name = owner[s]
            if to_layer != layer and to_layer not in ALLOWED[layer]:
                bad.append(f"{name} ({layer}) -> {s} in {to_name} ({to_layer})")
    for b in bad:
        print(b)
    print(f"check_layers: {len(objs)} objects, {len(bad)} upward references")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
