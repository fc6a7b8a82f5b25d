#!/usr/bin/env python3
"""Check what trace_names (tests/trace) left: check_names.py TRACE STDERR NRANKS

- the trace: ASCII bytes, strict UTF-8, strict JSON (json.loads), each task's track and
  run span named after its name cut to 47 bytes between characters, bytes that are not
  UTF-8 as U+FFFD;
- the statistics (in STDERR): one row per task, the name column 20 characters of the
  name escaped as a log line;
- the log (STDERR): strict UTF-8, every line starts with "utc[RANK] " or "[utc stats] ",
  no line is forged by a name, each name appears escaped, the watchdog named the task
  whose name holds a newline.

The expected forms are computed here from the rules of framework/base/text.h, written
again in Python, and a few are spelled out literally as well.
"""
import json
import re
import sys

# Keep in step with names[] in trace_names.c (None: a NULL name).
NAMES = [
    b"plain",
    "\u00e9t\u00e9 \u20ac \U0001F600".encode(),
    b"a" * 46 + "\u00e9".encode(),
    b"b" * 45 + "\u20ac".encode(),
    b"c" * 44 + "\U0001F600".encode(),
    b"bad\xff|\xc0\xaf|\xed\xa0\x80|\xe2\x82(",
    b"evil\nutc[0] error: forged line",
    b"esc\x1b[31mred\x1b[0m\ttab\rcr\x7fdel\xc2\x85nel",
    b'quote"back\\slash',
    "\u00e9".encode() * 21,
    b"",
    None,
]
EVIL = 6
KEEP = 47  # bytes of a name kept in the trace and the statistics (UTC__STATS_NAME - 1)
COLUMN = 20  # characters of the statistics' name column

errors = []


def check(cond, msg):
    if not cond:
        errors.append(msg)
    return cond


def units(b):
    """Split bytes into (bytes, char): valid UTF-8 characters (Python's strict decoder,
    RFC 3629), lone invalid bytes (char None), and at the end a valid beginning of a
    character cut short (char "cut")."""
    out, i = [], 0
    while i < len(b):
        for n in (1, 2, 3, 4):
            chunk = b[i:i + n]
            try:
                out.append((chunk, chunk.decode("utf-8")))
                i += n
                break
            except UnicodeDecodeError as e:
                if e.reason == "unexpected end of data":
                    if i + n >= len(b):
                        out.append((b[i:], "cut"))
                        i = len(b)
                        break
                    continue  # a longer character: take one more byte
                out.append((b[i:i + 1], None))
                i += 1
                break
    return out


def display(name):
    return b"(unnamed)" if not name else name


def cut(b, keep):
    """The name as kept: at most `keep` bytes, not ending inside a character."""
    if len(b) <= keep:
        return b
    u = units(b[:keep])
    if u and u[-1][1] == "cut":
        u = u[:-1]
    return b"".join(x for x, _ in u)


def as_json(b):
    """The string a JSON reader gets from the trace for bytes b."""
    return "".join("\ufffd" if ch in (None, "cut") else ch for _, ch in units(b))


def line_tokens(b):
    """b escaped as a log line, as a list of (text, columns)."""
    toks = []
    for raw, ch in units(b):
        if ch in (None, "cut"):
            toks += [("\\x%02x" % x, 4) for x in raw]
        elif ch in "\n\r\t":
            t = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch]
            toks.append((t, len(t)))
        elif ord(ch) < 0x20 or ord(ch) == 0x7f:
            toks.append(("\\x%02x" % ord(ch), 4))
        elif 0x80 <= ord(ch) <= 0x9f:
            toks.append(("\\u%04x" % ord(ch), 6))
        else:
            toks.append((ch, 1))
    return toks


def as_line(b):
    return "".join(t for t, _ in line_tokens(b))


def as_column(b, width):
    out, cols = "", 0
    for t, c in line_tokens(b):
        if cols + c > width:
            break
        out, cols = out + t, cols + c
    return out + " " * (width - cols)


# The rules, spelled out for a few names (so the model above is checked too).
LITERAL = {
    5: ("bad\ufffd|\ufffd\ufffd|\ufffd\ufffd\ufffd|\ufffd\ufffd(",
        "bad\\xff|\\xc0\\xaf|   ", "bad\\xff|\\xc0\\xaf|\\xed\\xa0\\x80|\\xe2\\x82("),
    EVIL: ("evil\nutc[0] error: forged line", "evil\\nutc[0] error: ",
           "evil\\nutc[0] error: forged line"),
    7: ("esc\x1b[31mred\x1b[0m\ttab\rcr\x7fdel\x85nel", "esc\\x1b[31mred\\x1b[0",
        "esc\\x1b[31mred\\x1b[0m\\ttab\\rcr\\x7fdel\\u0085nel"),
    2: ("a" * 46, "a" * 20, "a" * 46 + "\u00e9"),
    3: ("b" * 45, "b" * 20, "b" * 45 + "\u20ac"),
    4: ("c" * 44, "c" * 20, "c" * 44 + "\U0001F600"),
    9: ("\u00e9" * 21, "\u00e9" * 20, "\u00e9" * 21),
    10: ("(unnamed)", "(unnamed)" + " " * 11, "(unnamed)"),
    11: ("(unnamed)", "(unnamed)" + " " * 11, "(unnamed)"),
}


def expected(i):
    """(the name in the trace, its statistics column, its log form)"""
    b = display(NAMES[i])
    return as_json(cut(b, KEEP)), as_column(cut(b, KEEP), COLUMN), as_line(b)


def check_trace(path, n):
    raw = open(path, "rb").read()
    check(all(x < 0x80 for x in raw), "the trace holds bytes that are not ASCII")
    text = raw.decode("utf-8")  # strict: raises on anything that is not UTF-8
    data = json.loads(text)  # strict: a raw control character in a string raises
    ev = data["traceEvents"]
    for e in ev:
        for v in (e.get("name", ""), e.get("args", {}).get("name", "")):
            check(not any(0xD800 <= ord(c) <= 0xDFFF for c in v),
                  "a lone surrogate in %r" % v)
    tracks = {}
    for e in ev:
        if e.get("ph") == "M" and e["name"] == "thread_name":
            m = re.fullmatch(r"(.*) #(\d+) thread (\d+) \(local (\d+)\)", e["args"]["name"], re.S)
            if m:
                tracks.setdefault(int(m.group(2)), []).append((m.group(1), e["pid"], e["tid"]))
    spans = {(e["pid"], e["tid"], e["name"]) for e in ev if e.get("ph") == "X"}
    for i in range(len(NAMES)):
        want = expected(i)[0]
        got = tracks.get(i, [])
        check(len(got) == (2 if i == EVIL else 1), "task %d: %d tracks" % (i, len(got)))
        for name, pid, tid in got:
            check(name == want, "task %d: track named %r, expected %r" % (i, name, want))
            check(pid == i % n, "task %d: on rank %d, expected %d" % (i, pid, i % n))
            check((pid, tid, want + ".run") in spans, "task %d: no span %r" % (i, want + ".run"))


def check_log(path, n):
    raw = open(path, "rb").read()
    text = raw.decode("utf-8")  # strict
    lines = text.split("\n")
    check(lines[-1] == "", "the output does not end with a newline")
    lines = lines[:-1]
    prefix = re.compile(r"utc\[(\d+|-)\] |\[utc stats\] ")
    for l in lines:
        check(prefix.match(l), "a line without the utc[RANK] prefix: %r" % l)
        check("forged" not in l or l.startswith("utc[") and "evil\\n" in l,
              "a forged line: %r" % l)
        check("\r" not in l and "\x1b" not in l and "\t" not in l,
              "a raw control character in %r" % l)
    logs = [l for l in lines if l.startswith("utc[")]
    stats = [l[len("[utc stats] "):] for l in lines if l.startswith("[utc stats] ")]
    rows = {}
    for s in stats:
        col, rest = s[:COLUMN], s[COLUMN:].split()
        if len(rest) == 7 and rest[0].isdigit() and not col.startswith("conduit "):
            rows[int(rest[0])] = (col, int(rest[1]), int(rest[3]))
    for i in range(len(NAMES)):
        _, col, line = expected(i)
        r = rows.get(i)
        if check(r is not None, "statistics: no row for task %d" % i):
            check(r[0] == col, "statistics: task %d column %r, expected %r" % (i, r[0], col))
            check(r[1] == i % n and r[2] == 1, "statistics: task %d row %s" % (i, r))
        # the runtime's line for the failed run and main's for the wait's message
        failed = [l for l in logs if ("task %s (id %d) thread" % (line, i)) in l]
        check(len(failed) >= 1, "log: no line for task %d's failed run naming %r" % (i, line))
        waited = [l for l in logs if ("expected failure of task %d:" % i) in l]
        check(len(waited) == 1 and line in waited[0],
              "log: main's line for task %d %s does not quote %r" % (i, waited, line))
    evil = as_line(NAMES[EVIL])
    wd = [l for l in logs if " watchdog: " in l and ("task '%s'" % evil) in l]
    check(len(wd) >= 1, "log: no watchdog line naming task %r" % evil)
    return len(logs), len(stats)


def main():
    trace, log, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for i, (t, c, l) in LITERAL.items():
        check(expected(i) == (t, c, l), "the model disagrees with the literal form of %d: %r"
              % (i, expected(i)))
    try:
        check_trace(trace, n)
        nlogs, nstats = check_log(log, n)
    except (UnicodeDecodeError, ValueError, KeyError) as e:
        errors.append("%s: %s" % (type(e).__name__, e))
    if errors:
        print("names check FAILED (%d problems):" % len(errors))
        for e in errors[:40]:
            print("  " + e)
        sys.exit(1)
    print("names ok: %d names through the trace, %d log lines and %d statistics lines"
          % (len(NAMES), nlogs, nstats))


if __name__ == "__main__":
    main()
