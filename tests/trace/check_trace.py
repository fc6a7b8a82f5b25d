#!/usr/bin/env python3
"""Check the trace of trace_run (tests/trace): check_trace.py TRACE NRANKS [--expect CATS]

CATS: comma-separated categories whose hooks must have produced events (conduit, rma,
collective). Exit 0 when the trace is right, 1 with the reasons otherwise.
"""
import argparse
import collections
import json
import sys

MSGS, MSG_BYTES, TAG = 5, 1000, 3
TOL_US = 2000.0  # clock alignment tolerance between ranks, plus the sync's round trip

errors = []


def check(cond, msg):
    if not cond:
        errors.append(msg)
    return cond


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("nranks", type=int)
    ap.add_argument("--expect", default="")
    a = ap.parse_args()
    n, last = a.nranks, a.nranks - 1
    expect = set(x for x in a.expect.split(",") if x)

    with open(a.trace) as f:
        data = json.load(f)  # must be valid JSON
    ev = data["traceEvents"]
    other = data["otherData"]
    check(other["ranks"] == n, "otherData.ranks %s != %d" % (other["ranks"], n))
    check(other["dropped_events"] == 0, "events were dropped")
    global TOL_US
    TOL_US += float(other.get("clock_sync_rtt_us", 0.0))
    spans = [e for e in ev if e.get("ph") == "X"]
    check(other["events"] == len(spans), "otherData.events %d != %d complete events"
          % (other["events"], len(spans)))

    procs = {e["pid"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
    check(procs == set(range(n)), "process_name of ranks %s, expected 0..%d" % (sorted(procs), last))
    label = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e["name"] == "thread_name"}

    def tracks(pid, prefix):
        return sorted(k for k, v in label.items() if k[0] == pid and v.startswith(prefix))

    ping = tracks(0, "ping #")
    pong = tracks(last, "pong #")
    check(len(ping) == 2, "rank 0 has %d ping tracks, expected 2" % len(ping))
    check(len(pong) == 1, "rank %d has %d pong tracks, expected 1" % (last, len(pong)))
    for r in range(n):
        check(len(tracks(r, "gs #")) == 1, "rank %d: no gs track" % r)
        check(len(tracks(r, "main")) == 1, "rank %d: no main track" % r)

    by_track = collections.defaultdict(list)
    for s in spans:
        check(isinstance(s["ts"], (int, float)) and s["dur"] >= 0, "bad span %s" % s)
        check((s["pid"], s["tid"]) in label, "span on an unnamed track: %s" % s)
        by_track[(s["pid"], s["tid"])].append(s)

    # spans of one thread nest: a span starting inside another ends inside it
    for k, ss in by_track.items():
        ss.sort(key=lambda s: (s["ts"], -s["dur"]))
        stack = []
        for s in ss:
            while stack and s["ts"] >= stack[-1]["ts"] + stack[-1]["dur"]:
                stack.pop()
            if stack:
                outer = stack[-1]
                check(s["ts"] + s["dur"] <= outer["ts"] + outer["dur"] + 0.002,
                      "%s: %s overlaps %s without nesting" % (label[k], s["name"], outer["name"]))
            stack.append(s)

    def named(track, name):
        return [s for s in by_track.get(track, []) if s["name"] == name]

    for t in ping:
        check(len(named(t, "ping.run")) == 1, "%s: %d ping.run" % (label[t], len(named(t, "ping.run"))))
        check(len(named(t, "barrier")) == 1, "%s: no task barrier" % label[t])
    check(len(named(pong[0], "pong.run")) == 1 if pong else False, "pong.run missing")
    for r in range(n):
        g = tracks(r, "gs #")
        if g:
            check(len(named(g[0], "gs.run")) == 1, "rank %d: gs.run missing" % r)

    # world barriers: the program's two, first and last (the runtime may add its own in
    # between); with aligned clocks the ranks' spans of one barrier overlap
    wb = {r: sorted(named(tracks(r, "main")[0], "world_barrier"), key=lambda s: s["ts"])
          for r in range(n) if tracks(r, "main")}
    for r, b in wb.items():
        check(len(b) >= 2, "rank %d: %d world barriers, expected at least 2" % (r, len(b)))
    if all(len(b) >= 2 for b in wb.values()) and len(wb) == n and \
            len({len(b) for b in wb.values()}) == 1:
        for k in (0, -1):
            starts = [wb[r][k]["ts"] for r in range(n)]
            ends = [wb[r][k]["ts"] + wb[r][k]["dur"] for r in range(n)]
            check(min(ends) >= max(starts) - TOL_US,
                  "world barrier %d: rank spans do not overlap (clocks not aligned?): "
                  "starts %s ends %s" % (k, starts, ends))

    if "conduit" in expect:
        writes = [s for t in ping for s in named(t, "conduit_write")]
        reads = named(pong[0], "conduit_read") if pong else []
        check(len(writes) == MSGS, "ping: %d conduit_write, expected %d" % (len(writes), MSGS))
        check(len(reads) == MSGS, "pong: %d conduit_read, expected %d" % (len(reads), MSGS))
        for s in writes:
            args = s["args"]
            check(args.get("bytes") == MSG_BYTES and args.get("tag") == TAG and
                  args.get("peer") == last and args.get("conduit") == 0,
                  "ping conduit_write args %s" % args)
        for s in reads:
            args = s["args"]
            check(args.get("bytes") == MSG_BYTES and args.get("tag") == TAG and
                  args.get("peer") == 0, "pong conduit_read args %s" % args)
        # each conduit's transport on each rank, in a metadata record: conduit 0 (ping on rank
        # 0, pong on the last) is in-process with one rank, between ranks otherwise
        tps = {(e["pid"], e["args"]["conduit"]): e["args"]["transport"] for e in ev
               if e.get("ph") == "M" and e["name"] == "conduit_transport"}
        for r in {0, last}:
            tp = tps.get((r, 0))
            check(tp is not None and (tp == "inproc") == (n == 1) and
                  set(tp.split(",")) <= {"inproc", "node", "mpi"},
                  "rank %d: conduit 0's transport %r (metadata conduit_transport)" % (r, tp))
        answer = [s for t in ping for s in named(t, "conduit_read")]
        check(len(answer) == 1 and answer[0]["args"].get("bytes") == 8 and
              answer[0]["args"].get("tag") == TAG + 1, "ping: the answer's read %s" % answer)
        # causality across ranks, on the aligned clocks: message i is read after it is sent
        writes.sort(key=lambda s: s["ts"])
        reads.sort(key=lambda s: s["ts"])
        for i, (w, r) in enumerate(zip(writes, reads)):
            check(r["ts"] + r["dur"] >= w["ts"] - TOL_US,
                  "message %d read (ends %.3f) before it was written (%.3f)"
                  % (i, r["ts"] + r["dur"], w["ts"]))

    for r in range(n):
        g = tracks(r, "gs #")
        if not g:
            continue
        if "rma" in expect:
            for name, bytes_ in (("rma_store", 8), ("rma_load", 8), ("rma_quiet", None),
                                 ("rma_barrier", None)):
                ss = named(g[0], name)
                check(len(ss) >= 1, "rank %d: no %s" % (r, name))
                if bytes_ is not None and ss:
                    check(ss[0]["args"].get("bytes") == bytes_, "rank %d: %s args %s"
                          % (r, name, ss[0]["args"]))
            st = named(g[0], "rma_store")
            if st:
                check(st[0]["args"].get("peer") == (r + 1) % n, "rank %d: rma_store peer %s"
                      % (r, st[0]["args"]))
        if "collective" in expect:
            ar = named(g[0], "allreduce")
            check(len(ar) == 1 and ar[0]["args"].get("bytes") == 8,
                  "rank %d: allreduce %s" % (r, ar))
            # the newer kinds under their own names (bytes: what this rank sends)
            for name, sent in (("allgather", 8), ("alltoall", 8 * n), ("scan", 8)):
                ev = named(g[0], name)
                check(len(ev) == 1 and ev[0]["args"].get("bytes") == sent,
                      "rank %d: %s %s" % (r, name, ev))

    if errors:
        print("trace check FAILED (%d problems):" % len(errors))
        for e in errors[:40]:
            print("  " + e)
        sys.exit(1)
    cats = collections.Counter(s.get("cat") for s in spans)
    print("trace ok: %d ranks, %d spans on %d tracks, by category %s"
          % (n, len(spans), len(by_track), dict(cats)))


if __name__ == "__main__":
    main()
