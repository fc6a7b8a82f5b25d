#!/usr/bin/env python3
"""Check UTC_STATS output of trace_run: check_stats.py OUTPUT NRANKS [--expect conduit]"""
import argparse
import re
import sys

MSGS, MSG_BYTES = 5, 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("output")
    ap.add_argument("nranks", type=int)
    ap.add_argument("--expect", default="")
    a = ap.parse_args()
    n, last = a.nranks, a.nranks - 1
    lines = [l for l in open(a.output, errors="replace") if l.startswith("[utc stats]")]
    errors = []
    if not lines:
        print("no [utc stats] lines in %s" % a.output)
        sys.exit(1)
    head = lines[0]
    if not re.search(r"%d ranks?," % n, head):
        errors.append("header: %s" % head.strip())
    tasks, conduits = {}, {}
    for l in lines:
        f = l.split()[2:]
        if len(f) == 8 and f[0] in ("ping", "pong", "gs"):
            name, tid, rank, threads, runs, busy, wait, pct = f
            tasks[(name, int(rank))] = (int(threads), int(runs), float(busy), float(wait))
        elif len(f) == 8 and f[0] == "conduit" and f[1].isdigit():
            _, cid, rank, op, msgs, nbytes, mean, tp = f
            conduits[(int(cid), int(rank), op)] = (int(msgs), int(nbytes), float(mean), tp)
    def want(key, threads):
        if key not in tasks:
            errors.append("no row for task %s on rank %d" % key)
            return
        t = tasks[key]
        if t[0] != threads or t[1] != 1 or not (t[2] > 0 and 0 <= t[3] <= t[2] * 1.001):
            errors.append("task %s rank %d: threads %d runs %d busy %f wait %f" % (key + t))
    want(("ping", 0), 2)
    want(("pong", last), 1)
    for r in range(n):
        want(("gs", r), 1)
    if "conduit" in a.expect:
        exp = {}
        def add(rank, op, msgs, nbytes):
            m, b = exp.get((0, rank, op), (0, 0))
            exp[(0, rank, op)] = (m + msgs, b + nbytes)
        add(0, "write", MSGS, MSGS * MSG_BYTES)
        add(last, "read", MSGS, MSGS * MSG_BYTES)
        add(last, "write", 1, 8)
        add(0, "read", 1, 8)
        for k, (m, b) in exp.items():
            got = conduits.get(k)
            if not got or got[0] != m or got[1] != b or got[2] <= 0:
                errors.append("conduit %s: expected %d messages %d bytes, got %s" % (k, m, b, got))
            # its transport on that rank: in-process with one rank, between ranks otherwise
            elif (got[3] == "inproc") != (n == 1) or \
                    not set(got[3].split(",")) <= {"inproc", "node", "mpi"}:
                errors.append("conduit %s: transport column %r" % (k, got[3]))
    if errors:
        print("stats check FAILED:\n  " + "\n  ".join(errors))
        print("".join(lines))
        sys.exit(1)
    print("stats ok: %d task rows, %d conduit rows" % (len(tasks), len(conduits)))


if __name__ == "__main__":
    main()
