#!/usr/bin/env python3
"""Check that every function the library's messages name exists.

The library's error, last-error and log messages often tell the user what to call instead
("... or name the one that calls with utc_conduit_write_by"). A hint that names a function
the public headers do not declare sends the user looking for nothing. This check reads the
string literals of the library's sources (framework/, conduits/, gshared/, gpu/, runtime/,
include/), adjacent literals joined as the compiler joins them, and:

- every `utc_...` identifier in them (lower case: UTC_... are macros and environment
  variables) must be declared in include/utc/*.h, unless ALLOWED says why it is not a
  function (a key of a file the library writes);
- no literal may build a name with a conversion (`"%s_by"`, `"utc_%s"`, or a suffix such
  as `"_by"` to glue to a base name): such a name cannot be checked, so write each name
  out.

Exits 1 and names each file, line and name that fails; 0 otherwise.

Usage: scripts/check-hints.py [--list] [SOURCE_DIR]
  --list   print every name the messages mention, with where, then check
"""
import os
import re
import sys

LIBRARY_DIRS = ["framework", "conduits", "gshared", "gpu", "runtime", "include"]
SOURCE_EXT = (".c", ".h", ".cu", ".cuh")
HEADERS = os.path.join("include", "utc")

# Names in literals that are not functions, by the file that writes them, and why.
ALLOWED = {
    ("framework/observe/trace.c", "utc_version"): "a key of the trace file's JSON (otherData)",
}

NAME = re.compile(r"(?<![A-Za-z0-9_])utc_[a-z0-9_]+")
# a printf conversion that yields a string (%s, %.*s, %-20s), glued to a name's letters:
# after utc_ (or utc_x_) or before _x
CONVERSION = r"%[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?s"
GLUED = re.compile(r"(?<![A-Za-z0-9_])utc_[a-z0-9_]*" + CONVERSION + "|" + CONVERSION +
                   r"_[a-z0-9_]+")
# a literal that is only a name's suffix, to be glued to a base name ("%s%s", fn, "_by")
SUFFIX = re.compile(r"_[a-z][a-z0-9_]*")


def literals(text):
    """(line, value) of each string literal, adjacent ones (whitespace, comments or line
    breaks between them) joined. Comments, character constants and #include lines are
    skipped; escapes are kept as written (names hold none)."""
    out = []
    i, n, line = 0, len(text), 1
    current, start_line = None, 0
    at_line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            at_line_start = True
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
            continue
        if at_line_start and c == "#":
            m = re.match(r"#\s*include\b[^\n]*", text[i:])
            if m:
                i += m.end()
                continue
        at_line_start = False
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                if text[j] == "\\":
                    j += 1
                elif text[j] == "\n":
                    break  # unterminated: a compiler would refuse it anyway
                j += 1
            value = text[i + 1:j]
            if current is not None:
                current += value  # adjacent literals: one string
            else:
                current, start_line = value, line
            i = j + 1
            continue
        if current is not None:
            out.append((start_line, current))
            current = None
        if c == "'":
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        i += 1
    if current is not None:
        out.append((start_line, current))
    return out


def declared(root):
    """The utc_ identifiers the public headers declare or define (their code, comments
    and strings left out)."""
    names = set()
    folder = os.path.join(root, HEADERS)
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".h"):
            continue
        text = open(os.path.join(folder, f), encoding="utf-8", errors="replace").read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
        text = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)
        names.update(NAME.findall(text))
    return names


def sources(root):
    for d in LIBRARY_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, d)):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(SOURCE_EXT):
                    path = os.path.join(dirpath, f)
                    yield os.path.relpath(path, root).replace(os.sep, "/"), path


def main(argv):
    listing = "--list" in argv
    args = [a for a in argv if a != "--list"]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    if not os.path.isdir(os.path.join(root, HEADERS)):
        print("check-hints: %s has no %s" % (root, HEADERS))
        return 2
    api = declared(root)
    problems, mentioned = [], {}
    for rel, path in sources(root):
        text = open(path, encoding="utf-8", errors="replace").read()
        for line, value in literals(text):
            glued = [m.group(0) for m in GLUED.finditer(value)]
            if SUFFIX.fullmatch(value):
                glued.append(value)
            for g in glued:
                problems.append("%s:%d: \"%s\" builds a function name with a conversion; "
                                "write each name out, so that this check can see it"
                                % (rel, line, g))
            for name in NAME.findall(value):
                mentioned.setdefault(name, []).append("%s:%d" % (rel, line))
                if name in api or (rel, name) in ALLOWED:
                    continue
                problems.append("%s:%d: names %s, which include/utc/ does not declare "
                                "(a hint must name a function that exists)" % (rel, line, name))
    if listing:
        for name in sorted(mentioned):
            where = mentioned[name]
            print("%-40s %s%s" % (name, ", ".join(where[:3]),
                                  " (+%d)" % (len(where) - 3) if len(where) > 3 else ""))
    for p in problems:
        print(p)
    if problems:
        print("check-hints: %d problem(s)" % len(problems))
        return 1
    print("check-hints: the library's messages name %d utc_ identifiers, all declared in %s"
          % (len(mentioned), HEADERS))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
