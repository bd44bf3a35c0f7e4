#!/usr/bin/env python3
"""check_layers.py — no lower layer of src/ may reference a higher one.

Symbols: reads the library's object files (one per source file, under the
build tree's tessera_obj target), maps every defined global symbol to the
layer of the folder that defines it, and reports each undefined reference
whose definition lives in a layer the referencing file may not call.

Includes: reads the #include "..." lines of the sources.  A file of src/ may
include the public headers (include/tessera/) and the headers of its own
layer and of the layers it may reference; a file of tools/, apps/ or bench/
(the programs built on the library) may include the public headers and the
programs' own headers, never a header of src/.  tests/ may include anything.

The allowed directions are DESIGN.md §5's:

    core < comm < table < sched < ckpt      tick, tile: core, comm, sched
    runtime (src/runtime.c): everything

The faces (tick, tile) sit on sched's public API and comm's mailboxes, never
on table/.  tick may also use ckpt's store (src/ckpt/store.h, store_impl.h:
files, checksums, manifests — no table in them) for its checkpoints
(src/tick/ckpt.c); it must not call the tables face's snapshot protocol.

Usage: check_layers.py BUILD_DIR   (exit 0: clean, 1: violations, 2: usage)
"""
import os
import re
import subprocess
import sys

# The layers each layer may reference (besides itself).
ALLOWED = {
    "core": set(),
    "comm": {"core"},
    "table": {"core", "comm"},
    "sched": {"core", "comm", "table"},
    "ckpt": {"core", "comm", "table", "sched"},
    "tick": {"core", "comm", "sched", "ckpt"},  # ckpt: the store only (see above)
    "tile": {"core", "comm", "sched"},
    "runtime": {"core", "comm", "table", "sched", "ckpt", "tick", "tile"},
}


def layer_of(obj_path):
    """The layer of an object file: its folder under src/, or 'runtime'."""
    parts = obj_path.split(os.sep)
    i = len(parts) - 1 - parts[::-1].index("src")
    rest = parts[i + 1:]
    return rest[0] if len(rest) > 1 else "runtime"


def symbols(objs):
    """{object: (defined, undefined)} global symbol sets, from one nm run
    (one per object made the check slow on a busy machine)."""
    out = subprocess.run(["nm", "-g", "-A"] + objs, capture_output=True, text=True,
                         check=True).stdout
    sets = {o: (set(), set()) for o in objs}
    for line in out.splitlines():
        path, _, rest = line.partition(":")
        fields = rest.split()
        if path in sets and len(fields) in (2, 3):  # an undefined symbol has no address
            sets[path][1 if len(fields) == 2 else 0].add(fields[-1])
    return sets


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


# The programs built on the library: they see only its public headers.
PROGRAMS = ("tools", "apps", "bench")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def headers_under(source, tops):
    """Every header below the given top folders, as paths relative to source."""
    found = []
    for top in tops:
        for d, _, files in os.walk(os.path.join(source, top)):
            found += [os.path.relpath(os.path.join(d, f), source) for f in files
                      if f.endswith((".h", ".hpp"))]
    return found


def resolve(source, src_file, name, programs_headers):
    """The header (relative to source) that #include "name" in src_file
    means: the including file's folder first, then include/ and src/ (the
    library's include path), then the programs' folders (their include
    paths name several; a header found only there is theirs)."""
    here = os.path.normpath(os.path.join(os.path.dirname(src_file), name))
    if os.path.exists(os.path.join(source, here)):
        return here
    for top in ("include", "src"):
        if os.path.exists(os.path.join(source, top, name)):
            return os.path.normpath(os.path.join(top, name))
    for h in programs_headers:
        if h == name or h.endswith(os.sep + name):
            return h
    return None


def include_violations(source):
    """'file: #include "x" (why)' for each include a file may not have."""
    programs_headers = headers_under(source, PROGRAMS)
    bad = []
    for top in ("src",) + PROGRAMS:
        for d, _, files in os.walk(os.path.join(source, top)):
            for f in sorted(files):
                if not f.endswith((".c", ".h", ".cpp", ".hpp")):
                    continue
                path = os.path.relpath(os.path.join(d, f), source)
                with open(os.path.join(source, path), errors="replace") as fh:
                    names = INCLUDE.findall(fh.read())
                for name in names:
                    why = include_problem(path, resolve(source, path, name, programs_headers))
                    if why:
                        bad.append(f'{path}: #include "{name}" ({why})')
    return bad


def include_problem(path, header):
    """Why a file may not include header (None: it may, or it is not ours)."""
    if header is None or header.startswith("include" + os.sep):
        return None
    in_src = header.startswith("src" + os.sep)
    if path.split(os.sep)[0] in PROGRAMS:
        return "a private header of the library" if in_src else None
    if not in_src:
        return "a header of the programs"
    layer, to_layer = layer_of(path), layer_of(header)
    if to_layer != layer and to_layer not in ALLOWED[layer]:
        return f"{layer} may not include {to_layer}"
    return None


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
    sets = symbols(objs)
    for o in objs:
        defined, undefined = sets[o]
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
    incl = include_violations(source)
    for b in bad + incl:
        print(b)
    print(f"check_layers: {len(objs)} objects, {len(bad)} upward references, "
          f"{len(incl)} forbidden includes")
    return 1 if bad or incl else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
