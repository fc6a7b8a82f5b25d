#!/usr/bin/env python3
"""Check utc-trace-plot on synthetic traces with spans at known times:
check_plot.py PLOTTER WORK (tests/trace/CMakeLists.txt: trace_plot_window).

- the window: --from/--to on the axis (time since the first event, in its unit or with
  one) cut the axis to [from, to] and the spans to the window, read back from what the
  plotter drew (its --dump, taken from matplotlib's artists) and from the image's pixels;
- spans narrower than a pixel: merged per column, with the share of time they cover as
  opacity (their total time is kept), and drawn exactly once a zoom makes them wide;
- bad windows, bad files and bad output paths: one clear line, a non-zero exit, no
  traceback, no image;
- names with any characters (CJK, emoji, $...$, newlines, lone surrogates, bytes that are
  not UTF-8, very long ones) and a file name beyond ASCII: drawn, labels as written.
Needs matplotlib (run_trace_test.sh skips the test without it). Exit 0 when all hold.
"""
import json
import os
import subprocess
import sys

errors = []
ORIGIN = 1000.0  # the first event's ts: the axis' 0 is here, not at the file's ts 0


def check(cond, msg):
    if not cond:
        errors.append(msg)
    return cond


def near(a, b, tol=1e-6):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def span(pid, tid, cat, ms, dur_ms, name="x"):
    """An X event starting ms after ORIGIN."""
    return {"name": name, "cat": cat, "ph": "X", "pid": pid, "tid": tid,
            "ts": ORIGIN + ms * 1000.0, "dur": dur_ms * 1000.0, "args": {}}


def thread(pid, tid, name):
    return {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}


def write(path, events, ranks=2):
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"traceEvents": events, "otherData": {"ranks": ranks}}, f)


# Trace A: 15 ms, three tracks.
#   row 0 rank 0 main      runtime [0, 15]
#   row 1 rank 0 worker    task [0, 10], conduit [2, 4] and [5, 6]
#   row 2 rank 1 worker    task [4, 14], barrier [11, 12], rma of no length at 8
TRACE_A = [thread(0, 0, "main"), thread(0, 1, "worker #1"), thread(1, 1, "worker #2"),
           span(1, 1, "task", 4, 10), span(0, 0, "runtime", 0, 15), span(0, 1, "task", 0, 10),
           span(0, 1, "conduit", 2, 2), span(0, 1, "conduit", 5, 1),
           span(1, 1, "barrier", 11, 1), span(1, 1, "rma", 8, 0)]


def expected_a(lo, hi):
    """The exact rectangles of trace A's spans at least a pixel wide, cut to [lo, hi] ms."""
    out = []
    for e in TRACE_A:
        if e["ph"] != "X" or e["dur"] == 0:
            continue
        a = (e["ts"] - ORIGIN) / 1000.0
        b = a + e["dur"] / 1000.0
        if b > lo and a < hi:
            row = {(0, 0): 0, (0, 1): 1, (1, 1): 2}[(e["pid"], e["tid"])]
            out.append((e["cat"], row, max(a, lo), min(b, hi)))
    return sorted(out)


def plot(plotter, work, trace, *args, out="a.png", env=None):
    """Run the plotter with --dump; (exit status, stderr, dump or None)."""
    img, dump = os.path.join(work, out), os.path.join(work, out + ".dump.json")
    for p in (img, dump):
        if os.path.exists(p):
            os.remove(p)
    r = subprocess.run([plotter, trace, img, "--dump", dump] + list(args),
                       capture_output=True, text=True, errors="backslashreplace",
                       env=env, timeout=120)
    d = None
    if r.returncode == 0 and check(os.path.exists(dump), "%s: no dump" % (args,)):
        with open(dump, encoding="utf-8") as f:
            d = json.load(f)
        check(os.path.getsize(img) > 5000, "%s: image missing or tiny" % (args,))
    return r.returncode, r.stderr, d


def rects(d, unit_us=1000.0):
    """(category, row, x0, x1) of what was drawn exactly, in ms."""
    k = unit_us / 1000.0
    return sorted((c, row, x0 * k, x1 * k) for c, row, x0, x1, a in d["rects"] if a == 1.0)


def same_rects(got, want, what, tol=1e-6):
    if not check(len(got) == len(want), "%s: %d rectangles drawn, want %d:\n  %s\n  %s"
                 % (what, len(got), len(want), got, want)):
        return
    for g, w in zip(got, want):
        check(g[:2] == w[:2] and near(g[2], w[2], tol) and near(g[3], w[3], tol),
              "%s: drew %s, want %s" % (what, g, w))


def pixel(img, d, t, row):
    """The image's RGB at time t (axis unit) on row."""
    x0, y0, x1, y1 = d["axes_px"]
    lo, hi = d["xlim"]
    top, bottom = d["ylim"][1], d["ylim"][0]  # the first row on top
    px = x0 + (t - lo) / (hi - lo) * (x1 - x0)
    py = y1 - (row - top) / (bottom - top) * (y1 - y0)  # from the bottom
    h = img.shape[0]
    return img[h - 1 - int(py), int(px), :3]


def colour_near(rgb, hexcol, what):
    want = [int(hexcol[i:i + 2], 16) / 255.0 for i in (1, 3, 5)]
    check(all(abs(a - b) < 0.06 for a, b in zip(rgb, want)),
          "%s: pixel %s, want %s" % (what, [round(float(v), 2) for v in rgb], hexcol))


def check_window(plotter, work):
    trace = os.path.join(work, "plot-a.json")
    write(trace, TRACE_A)

    rc, err, d = plot(plotter, work, trace)
    if check(rc == 0, "whole trace: exit %d: %s" % (rc, err)):
        check(d["unit"] == "ms" and "(ms)" in d["xlabel"], "unit %s, %r" % (d["unit"], d["xlabel"]))
        check(d["xlim"] == [0.0, 15.0], "whole trace: axis %s, want [0, 15] ms" % d["xlim"])
        same_rects(rects(d), expected_a(0, 15), "whole trace")
        check(d["yticklabels"] == ["rank 0: main", "rank 0: worker #1", "rank 1: worker #2"],
              "rows %s" % d["yticklabels"])
        check(d["legend"] == ["runtime", "task", "conduit", "barrier", "rma"],
              "legend %s" % d["legend"])
        # the rma event of no length: one column at 8 ms, faint but visible
        rma = [r for r in d["rects"] if r[0] == "rma"]
        col = 15.0 / d["columns"]
        check(len(rma) == 1 and rma[0][1] == 2 and rma[0][2] <= 8.0 <= rma[0][3]
              and near(rma[0][3] - rma[0][2], col) and rma[0][4] >= 0.3,
              "rma event of no length drawn as %s, want one column at 8 ms" % rma)

    # a window, as numbers in the axis' unit, with units, and in another axis unit
    for args in (["--from", "3", "--to", "8"], ["--from", "3000us", "--to", "0.008s"],
                 ["--from=3.0ms", "--to", "8e3us"]):
        rc, err, d = plot(plotter, work, trace, *args)
        if not check(rc == 0, "%s: exit %d: %s" % (args, rc, err)):
            continue
        check(d["xlim"] == [3.0, 8.0], "%s: axis %s, want [3, 8] ms" % (args, d["xlim"]))
        same_rects(rects(d), expected_a(3, 8), " ".join(args))
        check(d["legend"] == ["runtime", "task", "conduit", "rma"],
              "%s: legend %s (the barrier is outside)" % (args, d["legend"]))
        check("3 ms to 8 ms" in d["title"], "%s: title %r" % (args, d["title"]))
        # every rectangle inside the window
        check(all(3.0 - 1e-9 <= r[2] and r[3] <= 8.0 + 1e-9 for r in d["rects"]),
              "%s: a rectangle outside the window: %s" % (args, d["rects"]))
    rc, err, d = plot(plotter, work, trace, "--unit", "us", "--from", "3000", "--to", "8000")
    if check(rc == 0, "--unit us: exit %d: %s" % (rc, err)):
        check(d["xlim"] == [3000.0, 8000.0] and "(us)" in d["xlabel"],
              "--unit us: axis %s %r" % (d["xlim"], d["xlabel"]))
        same_rects(rects(d, 1.0), expected_a(3, 8), "--unit us")

    # only --from: to the trace's end; a span ending on the window's start is not in it
    rc, err, d = plot(plotter, work, trace, "--from", "12")
    if check(rc == 0, "--from 12: exit %d: %s" % (rc, err)):
        check(d["xlim"] == [12.0, 15.0], "--from 12: axis %s" % d["xlim"])
        same_rects(rects(d), expected_a(12, 15), "--from 12")
        check("barrier" not in d["legend"], "--from 12: the barrier [11, 12] drawn")

    # the image itself: in [3, 8], 3.5 ms on row 1 is a conduit, 4.5 ms a task
    rc, err, d = plot(plotter, work, trace, "--from", "3", "--to", "8", out="px.png")
    if check(rc == 0, "pixels: exit %d: %s" % (rc, err)):
        import matplotlib.image
        img = matplotlib.image.imread(os.path.join(work, "px.png"))
        colour_near(pixel(img, d, 3.5, 1), "#f28e2b", "conduit at 3.5 ms")
        colour_near(pixel(img, d, 4.5, 1), "#4e79a7", "task at 4.5 ms")
        colour_near(pixel(img, d, 5.5, 1), "#f28e2b", "conduit at 5.5 ms")
        colour_near(pixel(img, d, 3.5, 2), "#ffffff", "nothing at 3.5 ms on row 2")
        colour_near(pixel(img, d, 7.9, 2), "#4e79a7", "task at 7.9 ms on row 2")


def check_merging(plotter, work):
    # one row: 20000 conduit events of 1 us every 4 us from 0 to 80 ms over a task run;
    # another: one event of 1 us at 40 ms
    ev = [thread(0, 1, "busy"), thread(0, 2, "idle"), span(0, 1, "task", 0, 80)]
    ev += [span(0, 1, "conduit", i * 0.004, 0.001) for i in range(20000)]
    ev += [span(0, 2, "conduit", 40, 0.001)]
    trace = os.path.join(work, "plot-b.json")
    write(trace, ev, ranks=1)
    rc, err, d = plot(plotter, work, trace, out="b.png")
    if check(rc == 0, "merging: exit %d: %s" % (rc, err)):
        busy = [r for r in d["rects"] if r[0] == "conduit" and r[1] == 0]
        col = 80.0 / d["columns"]
        check(len(busy) <= d["columns"], "merging: %d rectangles for %d columns"
              % (len(busy), d["columns"]))
        covered = sum((r[3] - r[2]) * r[4] for r in busy)
        check(abs(covered - 20.0) < 0.02 * 20.0,
              "merging: the columns cover %.3f ms, the events 20 ms" % covered)
        inner = [r[4] for r in busy[1:-1]]
        check(inner and all(0.2 <= a <= 0.3 for a in inner),
              "merging: opacities %s..%s, want about 0.25 (the share of time covered)"
              % (min(inner or [0]), max(inner or [0])))
        lone = [r for r in d["rects"] if r[1] == 1]
        check(len(lone) == 1 and near(lone[0][3] - lone[0][2], col) and lone[0][4] >= 0.3
              and lone[0][2] <= 40.0 <= lone[0][3],
              "merging: the lone event drawn as %s, want one visible column at 40 ms" % lone)
    # zoomed to 100 us, the 1 us events are 12 pixels wide: each drawn exactly, cut at
    # the edges (the one from 9.996 to 9.997 ms is outside, 10.1 to 10.101 starts on the end)
    rc, err, d = plot(plotter, work, trace, "--from", "10", "--to", "10.1", out="b.png")
    if check(rc == 0, "merging zoomed: exit %d: %s" % (rc, err)):
        busy = sorted(r for r in d["rects"] if r[0] == "conduit" and r[1] == 0)
        check(len(busy) == 25 and all(r[4] == 1.0 for r in busy)
              and all(near(r[3] - r[2], 0.001, 1e-3) for r in busy)
              and near(busy[0][2], 10.0) and near(busy[-1][2], 10.096),
              "merging zoomed: drew %d conduit rectangles %s..., want 25 exact ones of 1 us"
              % (len(busy), busy[:3]))


def check_errors(plotter, work):
    good = os.path.join(work, "plot-a.json")
    text = open(good, encoding="utf-8").read()
    cases = [  # (arguments, a file's contents or None for trace A, what stderr says)
        (["--from", "5", "--to", "5"], None, "not before"),
        (["--from", "8", "--to", "3"], None, "not before"),
        (["--from", "-1"], None, "negative"),
        (["--to", "-2ms"], None, "negative"),
        (["--from", "-.5"], None, "negative"),
        (["--from", "abc"], None, "not a time"),
        (["--from", "nan"], None, "not a time"),
        (["--to", "inf"], None, "not a time"),
        (["--from", ""], None, "not a time"),
        (["--from", "3 parsecs"], None, "not a time"),
        (["--from", "20"], None, "not inside the trace"),
        (["--from", "16ms", "--to", "20ms"], None, "not inside the trace"),
        (["--width", "0"], None, "--width"),
        ([], text[:len(text) // 2], "truncated"),
        ([], text.replace('"ph": "X"', '"ph" "X"', 1), "not a valid JSON trace"),
        ([], "", "empty"),
        ([], text.replace('"dur": 2000.0', '"dur": -2000.0', 1), "negative dur"),
        ([], text.replace('"ts": 5000.0', '"ts": "5000"', 1), "not a number"),
        ([], text.replace('"ts": 5000.0', '"ts": NaN', 1), "not a number"),
        ([], text.replace('"X", "pid": 1', '"X", "pid": [1]', 1), "not an integer or a string"),
        ([], '{"events": []}', "no traceEvents"),
        ([], '{"traceEvents": []}', "no spans"),
        ([], '"a string"', "not a trace"),
        ([], "[" * 100000, "JSON"),
    ]
    for args, contents, says in cases:
        trace = good
        if contents is not None:
            trace = os.path.join(work, "plot-bad.json")
            with open(trace, "w", encoding="utf-8") as f:
                f.write(contents)
        rc, err, _ = plot(plotter, work, trace, *args, out="bad.png")
        what = "%s %s" % (args, "" if contents is None else repr(contents[:40]))
        check(rc != 0, "%s: exit 0, want an error" % what)
        check("Traceback" not in err, "%s: a traceback:\n%s" % (what, err))
        check(err.startswith("utc-trace-plot: ") and says in err and err.count("\n") == 1,
              "%s: stderr %r, want one line saying %r" % (what, err, says))
        check(not os.path.exists(os.path.join(work, "bad.png")), "%s: an image written" % what)
    for trace, out, says in ((os.path.join(work, "none.json"), "bad.png", "cannot read"),
                             (work, "bad.png", "cannot read"),
                             (good, "bad.xyz", "cannot write"),
                             (good, "no/such/dir/bad.png", "cannot write")):
        r = subprocess.run([plotter, trace, os.path.join(work, out)], capture_output=True,
                           text=True, timeout=120)
        check(r.returncode != 0 and "Traceback" not in r.stderr and says in r.stderr,
              "%s -> %s: exit %d, stderr %r, want %r" % (trace, out, r.returncode, r.stderr,
                                                         says))


def check_names(plotter, work):
    names = {1: "naïve 任务 🙂 שלום", 2: "$\\frac{a}{b}$ costs $5", 3: "two\nlines\tand \x01",
             4: "lone SURROGATE surrogate", 5: "long " + "é" * 300, 6: "BYTES"}
    ev = [thread(0, t, n) for t, n in names.items()]
    ev += [span(0, t, "task", t, 1) for t in names]
    ev += [span(0, 1, "kind ✓ $x$", 1.2, 0.5)]
    trace = os.path.join(work, "трасса $1 ✓.json")
    with open(trace, "wb") as f:  # UTF-8, a lone surrogate escaped, bytes that are not UTF-8
        f.write(json.dumps({"traceEvents": ev}, ensure_ascii=False)
                .replace("SURROGATE", "\\ud800").encode("utf-8")
                .replace(b"BYTES", b"\\u0042\xff\xfe"))
    env = dict(os.environ, LC_ALL="C", LANG="C", PYTHONIOENCODING="ascii")
    rc, err, d = plot(plotter, work, trace, out="names ✓.png", env=env)
    if not check(rc == 0 and "Traceback" not in err, "names: exit %d: %s" % (rc, err)):
        return
    check("Warning" not in err, "names: warnings %r" % err)
    labels = d["yticklabels"]
    want = ["rank 0: naïve 任务 🙂 שלום", "rank 0: $\\frac{a}{b}$ costs $5",
            "rank 0: two\ufffdlines\ufffdand \ufffd", "rank 0: lone \ufffd surrogate",
            "rank 0: long " + "é" * 54 + "\u2026", "rank 0: B\ufffd\ufffd"]
    check(labels == want, "names: labels\n  %r\n want\n  %r" % (labels, want))
    check(d["legend"] == ["task", "kind ✓ $x$"], "names: legend %r" % d["legend"])
    check(d["title"].startswith("трасса $1 ✓.json: 1 ranks"), "names: title %r" % d["title"])


def main():
    plotter, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    check_window(plotter, work)
    check_merging(plotter, work)
    check_errors(plotter, work)
    check_names(plotter, work)
    for e in errors:
        print("FAIL:", e)
    if errors:
        return 1
    print("plot window ok: zoom, merging, %s" % "errors, names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
