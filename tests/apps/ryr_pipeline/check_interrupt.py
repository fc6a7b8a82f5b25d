#!/usr/bin/env python3
"""ryr --video stopped by a signal leaves no unfinished file behind.

  check_interrupt.py UTCRUN RYR DIR HOW NP SIGNAL [WHEN [RYR ARGS...]]

HOW: "direct" (ryr on its own, one rank), "utcrun" (scripts/utcrun -np NP), "group" (the
signal to utcrun's whole process group, as timeout(1) and job control send it) or "tty"
(utcrun in the foreground of a pseudo-terminal, the signal typed there: Ctrl-C for
SIGINT). SIGNAL: SIGINT or SIGTERM. WHEN: "early" sends the signal as soon as the hidden
temporary video exists (the pipeline may still be starting), "running" (the default) once
frames are being written. RYR ARGS are added to ryr's (e.g. --place output=1: the video
on rank 1, where the line is not printed).

Checks: the exit status is 128 + the signal (130, 143; through utcrun as well, where
Open MPI's mpirun would exit 1); standard error holds exactly one line saying ryr was
interrupted, naming the signal the process got (under mpirun, SIGTERM: how mpirun stops
its ranks); the output folder holds no hidden file (the temporary video, the --out probe)
and no video, and every PGM in it is complete.
"""
import os
import re
import select
import signal
import subprocess
import sys
import time

UTCRUN, RYR, DIR, HOW, NP, SIGNAME = sys.argv[1:7]
WHEN = sys.argv[7] if len(sys.argv) > 7 else "running"
EXTRA = sys.argv[8:]
SIG = getattr(signal, SIGNAME)
NP = int(NP)
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def listing(out):
    return sorted(os.listdir(out))


def temp_video(out):
    return [f for f in listing(out) if f.startswith(".v.y4m.part-")]


def frames_written(out):
    return len([f for f in listing(out) if f.startswith("frame_")])


def pgm_complete(path):
    """A binary PGM whose pixels are all there (P5, width, height, 255, then w*h bytes)."""
    data = open(path, "rb").read()
    m = re.match(rb"P5\s+(\d+)\s+(\d+)\s+255\s", data)
    return bool(m) and len(data) == m.end() + int(m.group(1)) * int(m.group(2))


out = os.path.join(DIR, "out")
os.makedirs(DIR, exist_ok=True)
subprocess.run(["rm", "-rf", out])
os.makedirs(out)
# enough frames for a minute or more: the signal always comes while it runs
args = [RYR, "--preset", "v1", "--size", "256x192", "--frames", "5000", "--orbit", "2",
        "--out", out, "--video", os.path.join(out, "v.y4m")] + EXTRA
if HOW != "direct":
    args = [UTCRUN, "-np", str(NP)] + args
elif NP != 1:
    sys.exit("direct runs are one rank")



def default_signals():
    """In the child: the signals' default actions, as a user's shell gives a program it
    starts (a test started in the background of a script would otherwise pass SIGINT on
    ignored, and a program rightly keeps ignoring it)."""
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


def descendants(root):
    """Every process below root (from /proc), to clean up after a failed case."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open("/proc/%s/stat" % entry).read()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            found.append(c)
            todo.append(c)
    return found


master = None
if HOW == "tty":
    import pty
    pid, master = pty.fork()
    if pid == 0:
        default_signals()
        os.execvp(args[0], args)
    proc = None
else:
    # a session of its own, as a job started by timeout(1) or a batch system has
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=default_signals)
    pid = proc.pid

captured = []  # the terminal's output (tty) is read as it comes, or the terminal blocks


def pump(seconds):
    end = time.time() + seconds
    while master is not None and time.time() < end:
        ready, _, _ = select.select([master], [], [], max(0.0, min(0.05, end - time.time())))
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            captured.append(chunk)
    if master is None:
        time.sleep(seconds)


def alive():
    if proc is not None:
        return proc.poll() is None
    return os.waitpid(pid, os.WNOHANG) == (0, 0)


# wait for the temporary video (and, "running", for frames on disk)
start = time.time()
while time.time() - start < 120 and alive():
    if temp_video(out) and (WHEN == "early" or frames_written(out) >= 6):
        break
    pump(0.01)
check(bool(temp_video(out)), "the temporary video exists before the signal (%s)" %
      (temp_video(out) or listing(out)[:5]))
if not alive():
    if proc is not None:
        err = proc.stderr.read().decode(errors="replace")
    else:
        pump(0.2)
        err = b"".join(captured).decode(errors="replace")
    check(False, "ryr is still running when the signal is sent (it ended: %r)" % err[-1500:])
    sys.exit(1)
print("signal %s (%s, %s) after %.2f s, %d frame files" % (SIGNAME, HOW, WHEN,
                                                           time.time() - start,
                                                           frames_written(out)))

if HOW == "tty" and SIG == signal.SIGINT:
    os.write(master, b"\x03")  # Ctrl-C: the terminal signals its foreground process group
elif HOW == "group":
    os.killpg(pid, SIG)
else:
    os.kill(pid, SIG)  # (a terminal types no SIGTERM: under "tty" it goes to utcrun alone)

end = time.time() + 60
status = None
while time.time() < end:
    if proc is not None:
        if proc.poll() is not None:
            status = proc.returncode
            break
    else:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = os.waitstatus_to_exitcode(st)
            break
    pump(0.05)
if status is None:
    check(False, "ryr stopped within a minute of the signal")
    for p in [pid] + descendants(pid):
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    sys.exit(1)
if proc is not None:
    err = proc.stderr.read().decode(errors="replace")
else:
    pump(0.2)
    err = b"".join(captured).decode(errors="replace")

check(status == 128 + SIG, "exit status %s, expected %d" % (status, 128 + SIG))
lines = [l for l in err.replace("\r", "\n").splitlines() if "interrupted" in l]
check(len(lines) == 1, "one line says it was interrupted: %r" % lines)
got = "SIGTERM" if HOW != "direct" else SIGNAME  # mpirun stops its ranks with SIGTERM
# (in a terminal the line may follow the echoed ^C)
check(any(re.match(r"(\^C)?ryr: interrupted by %s\b" % got, l) for l in lines),
      "the line names %s: %r" % (got, lines))
check(not any(l.startswith(".") for l in listing(out)),
      "no hidden file left in the output folder: %r" % [l for l in listing(out)
                                                        if l.startswith(".")])
check(not os.path.exists(os.path.join(out, "v.y4m")), "no video (the run did not finish)")
pgms = [f for f in listing(out) if f.endswith(".pgm")]
bad = [f for f in pgms if not pgm_complete(os.path.join(out, f))]
check(not bad, "every one of the %d PGM files is complete: %r" % (len(pgms), bad))
print("stderr (last 400 bytes): %r" % err[-400:])
if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
