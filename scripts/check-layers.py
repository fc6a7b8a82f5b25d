#!/usr/bin/env python3
"""Check the library's one-way layering: a file may include only headers of its own layer
or of a layer below it (doc/guide/architecture.md). Exits 1 and names each include that
points up or sideways; 0 when every arrow points down.

Usage: scripts/check-layers.py [--list] [SOURCE_DIR]
  --list   print every library file with its layer, then check
"""
import os
import re
import sys

# (path prefix, module, level), most specific first. A file may include a header of
# - its own module at the same or a lower level (siblings at one level, such as the two
#   transports, may not include each other: only their own entry and lower levels),
# - the framework (any level) when the file is in a module above it,
# - anything, when it is the runtime layer (the top).
LAYERS = [
    ("framework/base/", "framework", 0),
    ("framework/observe/", "framework", 1),
    ("framework/context/", "framework", 2),
    ("framework/tasks/", "framework", 3),
    ("framework/utc_internal.h", "framework", 4),  # the framework's face to modules above
    ("conduits/service/", "conduits", 0),
    ("conduits/shm/", "conduits", 1),
    ("conduits/mpi/", "conduits", 1),
    ("conduits/node/", "conduits", 1),
    ("conduits/components.c", "conduits", 2),  # the component table: names each transport
    ("conduits/shared/", "conduits", 2),  # a transport made of the two above
    ("conduits/device/", "conduits", 2),  # device memory over a pair's host transport
    ("conduits/", "conduits", 3),
    ("gshared/core/", "gshared", 0),
    ("gshared/data/", "gshared", 1),
    ("gshared/ops/", "gshared", 2),
    ("gshared/", "gshared", 3),
    ("gpu/", "gpu", 0),
    ("runtime/", "runtime", 0),
]
LIBRARY_DIRS = ["framework", "conduits", "gshared", "gpu", "runtime"]
SOURCE_EXT = (".c", ".h", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def entry(rel):
    for prefix, module, level in LAYERS:
        if rel == prefix or rel.startswith(prefix):
            return prefix, module, level
    return None


def resolve(root, including_rel, name):
    """The included file, relative to root, as the compiler finds it: next to the
    including file, then from the include roots (framework/, each module, the project)."""
    here = os.path.dirname(including_rel)
    candidates = [os.path.join(here, name)]
    candidates += [os.path.join(d, name) for d in ("framework", "conduits", "gshared", "gpu", "")]
    for c in candidates:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(root, c)):
            return c
    return None


def allowed(src, dst):
    s_prefix, s_mod, s_lvl = src
    d_prefix, d_mod, d_lvl = dst
    if s_mod == "runtime":
        return True
    if s_mod != d_mod:
        return d_mod == "framework"
    if d_lvl < s_lvl:
        return True
    return d_lvl == s_lvl and d_prefix == s_prefix


def main(argv):
    listing = "--list" in argv
    args = [a for a in argv if not a.startswith("--")]
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__.strip())
        return 0
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    bad, unplaced, nfiles = [], [], 0
    for top in LIBRARY_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith(SOURCE_EXT):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), root)
                src = entry(rel)
                nfiles += 1
                if src is None:
                    unplaced.append(rel)
                    continue
                if listing:
                    print(f"{src[1]:9} {src[2]}  {rel}")
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
                    for lineno, line in enumerate(fh, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = resolve(root, rel, m.group(1))
                        if target is None:
                            continue  # a generated or system header found elsewhere
                        dst = entry(target)
                        if dst is None:
                            unplaced.append(target)
                        elif not allowed(src, dst):
                            bad.append(f"{rel}:{lineno}: includes {target} "
                                       f"({dst[1]} level {dst[2]}) from {src[1]} level {src[2]}")
    for u in sorted(set(unplaced)):
        print(f"check-layers: {u} belongs to no layer: add it to LAYERS in {__file__}")
    for b in bad:
        print(f"check-layers: {b}")
    if bad or unplaced:
        print(f"check-layers: {len(bad)} include(s) point up or sideways, "
              f"{len(set(unplaced))} file(s) unplaced ({nfiles} files read)")
        return 1
    print(f"check-layers: {nfiles} files, every include points down")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
