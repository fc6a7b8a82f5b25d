#!/usr/bin/env bash
# bench-apps.sh: benchmark figures of the dissertation's apps (a benchmark, not a test).
#
#   scripts/bench-apps.sh node [--build DIR] [--quick] [--rounds N] [--no-write]
#
# node: the single-node apps (rotate, yuv, raytrace, md5, bfs) at size M, and L where it
#   runs in a few minutes, with seq, omp and utc at 1 and 2 threads (as figure 4.1). Prints
#   the speedup over seq and utc's time over omp's; writes them, the machine's load and the
#   lines of code per version (as table 4.2) into the "Single-node apps" section of
#   doc/PERFORMANCE.md (between its bench-apps markers), and draws
#   doc/img/apps-node-speedup.png (python3 with matplotlib).
#   --build DIR   the build folder (default build-node; made with -DUTC_WITH_CUDA=OFF if absent)
#   --quick       size M only, fewer repetitions (a smoke run: figures are not written)
#   --rounds N    run the set N times and keep each configuration's fastest (default 4;
#                 the long L runs take part in the first 2 rounds only)
#   --no-write    print only; leave doc/ alone
#
# Each run reports the fastest of its --reps repetitions; the versions of one app and size
# run one after another, interleaved round by round, so they see the same machine.
set -euo pipefail


root=$(cd "$(dirname "$0")/.." && pwd)
utcrun=$root/scripts/utcrun

usage() {
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
}

# ---- cluster mode (the cluster apps: mm, heat, kmeans, nbody, mc) ----
#
#   scripts/bench-apps.sh cluster [--build DIR] [--quick] [--rounds N] [--no-write]
#
# cluster: the cluster apps at size M (appendix A, table A.6) with seq, mpi on 2 processes,
#   and utc as 1 rank x 2 threads and as 2 ranks x 1 thread: the same two cores each time
#   (figure 4.3's comparison on one node). Prints each time with its speedup over seq,
#   utc's time over mpi's, and the share of the run spent in communication (figure 4.5);
#   writes them, the machine's load and the lines of code per version into the "Cluster
#   apps" section of doc/PERFORMANCE.md (between its bench-apps cluster markers) and draws
#   doc/img/apps-cluster.png (python3 with matplotlib).
#   --build DIR   the build folder (default build-cluster; made with -DUTC_WITH_CUDA=OFF if absent)
#   --quick       one round (a smoke run: figures are not written)
#   --rounds N    run the whole set N times, interleaved, keeping each configuration's
#                 fastest run (default 5)
#   --reps N      runs inside each process (the app's --reps: it reports its fastest;
#                 default 3)
#   --no-write    print only; leave doc/ alone
usage_cluster() {
    sed -n '/^# ---- cluster mode/,/^#   --no-write/p' "$0" | sed '1,2d; s/^# \{0,1\}//'
}
usage_node() {
    usage
}

# A python3 that has matplotlib (Debian's, when the one on PATH lacks it).
find_python() {
    local py
    for py in python3 /usr/bin/python3; do
        if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import matplotlib' 2>/dev/null; then
            echo "$py"
            return
        fi
    done
    command -v python3 || true
}

# One run of a round: append the JSON line it prints to $results and show its time, or
# show why it failed. Arguments: round, app, the rest of its label, then the command.
# Uses bench's $out, $results and $app_width.
run_one() {
    local round=$1 app=$2 label=$3 line
    shift 3
    if line=$("$@" </dev/null 2>"$out/err" | grep '^{"app"' | tail -n 1) && [ -n "$line" ]; then
        echo "$line" >>"$results"
        # node apps write "seconds": 1.5, cluster apps "seconds":1.5,...,"comm_share":0.1
        printf '  round %d  %-*s %s: %s\n' "$round" "$app_width" "$app" "$label" "$(echo "$line" |
            sed -e 's/.*"seconds": *\([0-9.]*\).*"comm_share": *\([0-9.]*\).*/\1 s, comm share \2/' \
                -e t -e 's/.*"seconds": *\([0-9.]*\).*/\1 s/')" >&2
    else
        echo "  $app $label FAILED: $(head -c 300 "$out/err")" >&2
    fi
}

# The runs of one round of node mode: each app and size of $plan (L in the first two
# rounds only) with each of $configs (impl:threads).
node_round() {
    local round=$1 app size reps cfg impl threads
    while read -r app size reps; do
        [ "$size" = L ] && [ "$round" -gt 2 ] && continue
        for cfg in $configs; do
            impl=${cfg%:*} threads=${cfg#*:}
            local cmd=("$build/apps/$app/$app" --impl "$impl" --threads "$threads"
                --size "$size" --reps "$reps" --json)
            [ "$impl" = utc ] && cmd=("$utcrun" -np 1 "${cmd[@]}")
            run_one "$round" "$app" "$size $impl x$threads" "${cmd[@]}"
        done
    done <<<"$plan"
}

# The runs of one round of cluster mode: each app at size M with each of $configs
# (impl:ranks:threads).
cluster_round() {
    local round=$1 app cfg impl np threads
    for app in $apps; do
        for cfg in $configs; do
            IFS=: read -r impl np threads <<<"$cfg"
            local cmd=("$utcrun" -np "$np" "$build/apps/$app/$app" --impl "$impl" --size M
                --reps "$reps" --json)
            [ "$impl" = utc ] && cmd+=(--threads "$threads")
            run_one "$round" "$app" "$impl $np x $threads" "${cmd[@]}"
        done
    done
}

# bench node|cluster [options]: build the mode's apps, run its rounds, report (bench_report).
bench() {
    local mode=$1
    shift
    local build=$root/build-$mode quick=0 write=1 rounds reps=1 apps configs plan='' app_width
    local numbers_msg="--rounds needs a positive number"
    if [ "$mode" = node ]; then
        rounds=4 apps="rotate yuv raytrace md5 bfs" app_width=8
        configs="seq:1 omp:1 utc:1 omp:2 utc:2"
    else
        rounds=5 reps=3 apps="mm heat kmeans nbody mc" app_width=7
        # impl:ranks:threads, all on the same two cores
        configs="seq:1:1 mpi:2:1 utc:1:2 utc:2:1"
        numbers_msg="--rounds and --reps need positive numbers"
    fi
    while [ $# -gt 0 ]; do
        case "$1" in
            --build) build=$(cd "$2" 2>/dev/null && pwd || echo "$2"); shift 2 ;;
            --quick) quick=1; shift ;;
            --rounds) rounds=${2:-}; shift 2 ;;
            --reps) [ "$mode" = cluster ] || break; reps=${2:-}; shift 2 ;;
            --no-write) write=0; shift ;;
            -h|--help) "usage_$mode"; exit 0 ;;
            *) break ;;
        esac
    done
    if [ $# -gt 0 ]; then
        echo "bench-apps: $mode: unknown option '$1'" >&2
        exit 2
    fi
    local n
    for n in "$rounds" "$reps"; do
        case "$n" in ''|*[!0-9]*|0) echo "bench-apps: $numbers_msg" >&2; exit 2 ;; esac
    done
    [ "$quick" = 1 ] && write=0 && rounds=1 && reps=1

    if [ ! -f "$build/CMakeCache.txt" ]; then
        echo "bench-apps: configuring $build" >&2
        cmake -S "$root" -B "$build" -DUTC_WITH_CUDA=OFF >/dev/null
    fi
    # shellcheck disable=SC2086
    cmake --build "$build" -j "$(nproc)" --target $apps >/dev/null

    # node: app size reps, L where one app's set runs in a few minutes on 2 cores
    if [ "$mode" = node ] && [ "$quick" = 1 ]; then
        plan="rotate M 2
yuv M 2
raytrace M 1
md5 M 1
bfs M 3"
    elif [ "$mode" = node ]; then
        plan="rotate M 10
rotate L 3
yuv M 20
yuv L 3
raytrace M 3
raytrace L 1
md5 M 3
md5 L 1
bfs M 30
bfs L 5"
    fi

    local out
    out=$(mktemp -d /tmp/bench-apps-XXXXXX)
    local results=$out/$mode.jsonl
    : >"$results"
    local load_before host
    load_before=$(cut -d' ' -f1-3 /proc/loadavg)
    host="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr)"
    echo "bench-apps $mode: $host; load average $load_before" >&2

    local round
    for round in $(seq 1 "$rounds"); do
        "${mode}_round" "$round"
    done
    local load_after
    load_after=$(cut -d' ' -f1-3 /proc/loadavg)

    local py
    py=$(find_python)
    [ -n "$py" ] || { echo "bench-apps: no python3" >&2; exit 1; }
    MODE=$mode RESULTS=$results ROOT=$root WRITE=$write HOST=$host ROUNDS=$rounds REPS=$reps \
        LOAD_BEFORE=$load_before LOAD_AFTER=$load_after DATE=$(date -u +%Y-%m-%d) \
        "$py" - <<'PYEOF'
import json, os, statistics

mode, root = os.environ["MODE"], os.environ["ROOT"]
rows = [json.loads(l) for l in open(os.environ["RESULTS"]) if l.strip()]

# ---- lines of code per version (table 4.2): non-blank lines that are not only comment ----
def loc(path):
    n, in_block = 0, False
    for raw in open(path, encoding="utf-8", errors="replace"):
        s, code, i = raw.strip(), "", 0
        while i < len(s):
            if in_block:
                j = s.find("*/", i)
                if j < 0:
                    i = len(s)
                else:
                    in_block, i = False, j + 2
            elif s.startswith("/*", i):
                in_block, i = True, i + 2
            elif s.startswith("//", i):
                break
            else:
                code += s[i]
                i += 1
        n += bool(code.strip())
    return n

def loc_common(prefix, exts):
    """Lines of apps/common's files named prefix*, ending in one of exts."""
    d = os.path.join(root, "apps/common")
    return sum(loc(os.path.join(d, f)) for f in sorted(os.listdir(d))
               if f.startswith(prefix) and f.endswith(exts))

def loc_versions(app, version_of):
    """Lines of the app's C, header and CUDA files, by version_of(file name)."""
    d = os.path.join(root, "apps", app)
    part = {}
    for f in sorted(os.listdir(d)):
        if f.endswith((".c", ".h", ".cu")):
            part[version_of(f)] = part.get(version_of(f), 0) + loc(os.path.join(d, f))
    return part

def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt

def write_doc(fig, image, section, block):
    """Save fig as doc/img/<image>, and put block (lines) between the bench-apps <mode>
    markers of doc/PERFORMANCE.md, or at its end under '## <section>' when they are missing."""
    os.makedirs(os.path.join(root, "doc/img"), exist_ok=True)
    fig.savefig(os.path.join(root, "doc/img", image), dpi=110)
    begin, end = "<!-- bench-apps %s: begin -->" % mode, "<!-- bench-apps %s: end -->" % mode
    block = "\n".join([begin] + block + [end])
    path = os.path.join(root, "doc/PERFORMANCE.md")
    text = open(path).read()
    if begin in text and end in text:
        text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n## %s\n\n" % section + block + "\n"
    open(path, "w").write(text)
    print("\nwrote doc/PERFORMANCE.md (section '%s') and doc/img/%s" % (section, image))

def report_node():
    best = {}  # (app, size, impl, threads) -> fastest seconds over the rounds
    for r in rows:
        k = (r["app"], r["size"], r["impl"], r["threads"])
        best[k] = min(best.get(k, r["seconds"]), r["seconds"])

    apps = ["rotate", "yuv", "raytrace", "md5", "bfs"]
    groups = [(a, s) for a in apps for s in ("M", "L") if (a, s, "seq", 1) in best]
    cfgs = [("omp", 1), ("utc", 1), ("omp", 2), ("utc", 2)]

    def fmt(x):
        if x is None:
            return "-"
        return "%.5f" % x if x < 0.01 else "%.4f" % x if x < 1 else "%.3f" % x

    lines = ["| app | size | seq (s) | omp x1 | utc x1 | omp x2 | utc x2 | utc/omp x1 | utc/omp x2 |",
             "|---|---|---|---|---|---|---|---|---|"]
    for a, s in groups:
        seq = best[(a, s, "seq", 1)]
        cells = []
        for impl, t in cfgs:
            v = best.get((a, s, impl, t))
            cells.append("-" if v is None else "%s s (%.2fx)" % (fmt(v), seq / v))
        ratios = []
        for t in (1, 2):
            o, u = best.get((a, s, "omp", t)), best.get((a, s, "utc", t))
            ratios.append("-" if not o or not u else "%.3f" % (u / o))
        lines.append("| %s | %s | %s | %s | %s |" % (a, s, fmt(seq), " | ".join(cells), " | ".join(ratios)))
    table = "\n".join(lines)
    print(table)

    def version_of(name):
        if name in ("seq.c", "omp.c", "utc.c"):
            return name[:-2]
        if name == "gpu.c" or "_kernel." in name:
            return "gpu"
        if name == "bfs_expand.h":  # the frontier step shared by omp and utc
            return "omp+utc"
        if name == "main.c":
            return "main"
        return "shared"

    loc_lines = ["| app | main.c | app core | seq | omp | utc (CPU task) | gpu (GPU task) | total seq / omp / utc / gpu |",
                 "|---|---|---|---|---|---|---|---|"]
    common = loc_common("app_", (".c", ".h"))
    for a in apps:
        part = loc_versions(a, version_of)
        base = part.get("main", 0) + part.get("shared", 0)
        both = part.get("omp+utc", 0)
        v = {"seq": part.get("seq", 0), "omp": part.get("omp", 0) + both,
             "utc": part.get("utc", 0) + both, "gpu": part.get("gpu", 0)}
        loc_lines.append("| %s | %d | %d | %d | %d | %d | %d | %s |" % (
            a, part.get("main", 0), part.get("shared", 0), v["seq"], v["omp"], v["utc"], v["gpu"],
            " / ".join(str(base + v[k]) for k in ("seq", "omp", "utc", "gpu"))))
    loc_table = "\n".join(loc_lines)
    print()
    print(loc_table)
    print("\napps/common (app_*.c, app_*.h), shared by all five: %d lines" % common)

    if os.environ["WRITE"] != "1":
        return

    # ---- chart: speedup over seq, log2 axis, as figure 4.1 ----
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 4.2))
    width = 0.2
    colors = {("omp", 1): "#9ecae1", ("utc", 1): "#fdae6b", ("omp", 2): "#3182bd", ("utc", 2): "#e6550d"}
    for k, (impl, t) in enumerate(cfgs):
        xs, ys = [], []
        for g, (a, s) in enumerate(groups):
            v = best.get((a, s, impl, t))
            if v:
                xs.append(g + (k - 1.5) * width)
                ys.append(best[(a, s, "seq", 1)] / v)
        ax.bar(xs, ys, width, label="%s, %d thread%s" % ("OpenMP" if impl == "omp" else "UTC CPU task", t, "s" if t > 1 else ""),
               color=colors[(impl, t)])
    ax.set_yscale("log", base=2)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(["%s %s" % g for g in groups])
    ax.set_ylabel("speedup over seq (log2)")
    ax.set_title("Single-node apps: OpenMP and UTC CPU task speedup over sequential (%s)" % os.environ["DATE"])
    ax.legend(fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.12))
    fig.tight_layout()

    write_doc(fig, "apps-node-speedup.png", "Single-node apps", [
        "Generated by `scripts/bench-apps.sh node` on %s: %s. Load average (1, 5, 15 min) "
        "before %s, after %s. Each figure is the fastest of `--reps` runs inside one process "
        "and of %s rounds (L: at most 2), the versions interleaved.\n" % (os.environ["DATE"], os.environ["HOST"],
            os.environ["LOAD_BEFORE"], os.environ["LOAD_AFTER"], os.environ["ROUNDS"]),
        "Time of the computation, and speedup over seq in brackets; the last two columns are "
        "UTC's time over OpenMP's with the same threads (below 1.05: the target is met).\n",
        table, "",
        "![speedup over seq](img/apps-node-speedup.png)", "",
        "Lines of code (non-blank, not only comment) per version, as table 4.2. A version's "
        "total is main.c + the app core + its own files; the RYR core (`apps/ryr`) that rotate, "
        "yuv and raytrace reuse and apps/common (%d lines) are not counted. raytrace's GPU "
        "kernel is the RYR sample's `render_gpu.cu`.\n" % common,
        loc_table])

def report_cluster():
    runs = {}  # (app, impl, ranks, threads) -> [run, ...]
    for r in rows:
        runs.setdefault((r["app"], r["impl"], r["ranks"], r["threads"]), []).append(r)
    best = {k: min(v, key=lambda r: r["seconds"]) for k, v in runs.items()}
    median = {k: statistics.median(r["seconds"] for r in v) for k, v in runs.items()}

    apps = [a for a in ["mm", "heat", "kmeans", "nbody", "mc"] if (a, "seq", 1, 1) in best]
    cfgs = [("mpi", 2, 1), ("utc", 1, 2), ("utc", 2, 1)]
    names = {("mpi", 2, 1): "mpi, 2 processes", ("utc", 1, 2): "utc, 1 rank x 2 threads",
             ("utc", 2, 1): "utc, 2 ranks x 1 thread"}
    dims = {a: best[(a, "seq", 1, 1)].get("dims", "") for a in apps}

    def fmt(x):
        return "%.4f" % x if x < 1 else "%.3f" % x

    def ratio(a, c, table):
        m, u = table.get((a, "mpi", 2, 1)), table.get((a,) + c)
        if isinstance(m, dict):
            m, u = m["seconds"], u["seconds"] if u else None
        return "-" if not m or not u else "%.3f" % (u / m)

    lines = ["| app (size M) | seq | mpi 2 proc | utc 1x2 | utc 2x1 | utc/mpi 1x2 | utc/mpi 2x1 |",
             "|---|---|---|---|---|---|---|"]
    for a in apps:
        seq = best[(a, "seq", 1, 1)]["seconds"]
        cells = []
        for c in cfgs:
            r = best.get((a,) + c)
            cells.append("-" if r is None else "%s s (%.2fx)" % (fmt(r["seconds"]), seq / r["seconds"]))
        lines.append("| %s: %s | %s s | %s | %s | %s |" % (a, dims[a], fmt(seq), " | ".join(cells),
                     ratio(a, ("utc", 1, 2), best), ratio(a, ("utc", 2, 1), best)))
    table = "\n".join(lines)

    comm_lines = ["| app | mpi 2 proc | utc 1x2 | utc 2x1 | utc/mpi 1x2, median of rounds | utc/mpi 2x1, median of rounds |",
                  "|---|---|---|---|---|---|"]
    for a in apps:
        cells = []
        for c in cfgs:
            r = best.get((a,) + c)
            cells.append("-" if r is None else "%.1f%% (%s s)" % (100 * r["comm_share"], fmt(r["comm_seconds"])))
        comm_lines.append("| %s | %s | %s | %s |" % (a, " | ".join(cells), ratio(a, ("utc", 1, 2), median),
                          ratio(a, ("utc", 2, 1), median)))
    comm_table = "\n".join(comm_lines)
    print(table)
    print()
    print(comm_table)

    def version_of(f):
        return "main" if f.endswith("_main.c") else "mpi" if f.endswith("_mpi.c") else \
            "utc" if f.endswith("_utc.c") else "gpu" if ("_gpu." in f or "_kernels." in f) else "shared"

    loc_lines = ["| app | main | shared (data, kernel, verify) | seq | mpi | utc (CPU task) | gpu (GPU task + kernel) |",
                 "|---|---|---|---|---|---|---|"]
    for a in apps:
        part = loc_versions(a, version_of)
        # seq is part of the shared file (data, kernel, seq run, verification)
        loc_lines.append("| %s | %d | %d | (in shared) | %d | %d | %d |" % (
            a, part.get("main", 0), part.get("shared", 0), part.get("mpi", 0), part.get("utc", 0),
            part.get("gpu", 0)))
    common = loc_common("cluster_", (".c", ".h", ".cu"))
    loc_table = "\n".join(loc_lines)
    print()
    print(loc_table)

    if os.environ["WRITE"] != "1":
        return

    # ---- chart: speedup over seq (as figure 4.3 on one node) and communication share (4.5) ----
    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    width = 0.26
    colors = {("mpi", 2, 1): "#3182bd", ("utc", 1, 2): "#e6550d", ("utc", 2, 1): "#fdae6b"}
    for k, c in enumerate(cfgs):
        xs = [g + (k - 1) * width for g, a in enumerate(apps) if (a,) + c in best]
        sp = [best[(a, "seq", 1, 1)]["seconds"] / best[(a,) + c]["seconds"] for a in apps if (a,) + c in best]
        cs = [100 * best[(a,) + c]["comm_share"] for a in apps if (a,) + c in best]
        ax1.bar(xs, sp, width, label=names[c], color=colors[c])
        ax2.bar(xs, cs, width, label=names[c], color=colors[c])
    ax1.axhline(1.0, color="black", linewidth=0.8)
    ax1.set_ylabel("speedup over seq (2 cores)")
    ax1.set_title("Cluster apps, size M: speedup over seq")
    ax2.set_ylabel("% of run time in communication")
    ax2.set_title("Share of time in communication (rank 0)")
    for ax in (ax1, ax2):
        ax.set_xticks(range(len(apps)))
        ax.set_xticklabels(apps)
    handles, labels = ax1.get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=3)
    fig.suptitle("%s, %s (shared machine; fastest of %s rounds x %s runs)" % (os.environ["DATE"], os.environ["HOST"].split(",")[0], os.environ["ROUNDS"], os.environ["REPS"]), fontsize=9)
    fig.tight_layout(rect=(0, 0.07, 1, 0.97))

    write_doc(fig, "apps-cluster.png", "Cluster apps", [
        "Generated by `scripts/bench-apps.sh cluster` on %s: %s. Load average (1, 5, 15 min) "
        "before %s, after %s: the machine is shared with other engineers' builds and runs, so "
        "each figure is the fastest of %s rounds (the configurations interleaved within each "
        "round) of %s runs each (`--reps`).\n" % (os.environ["DATE"], os.environ["HOST"],
            os.environ["LOAD_BEFORE"], os.environ["LOAD_AFTER"], os.environ["ROUNDS"], os.environ["REPS"]),
        "Run time (rank 0, from the first distribution to the result on rank 0) and speedup "
        "over seq in brackets; the last two columns are utc's time over mpi's on the same two "
        "cores (target: at most 1.05).\n",
        table, "",
        "Share of the run spent in communication (rank 0's time in the communication phases "
        "over its run time, as figure 4.5), of the same runs; and utc/mpi again from the "
        "median over the rounds (each round's figure being its process's fastest of `--reps`) "
        "instead of the fastest:\n",
        comm_table, "",
        "![cluster apps](img/apps-cluster.png)", "",
        "Lines of code (non-blank, not only comment) per version, as table 4.2: `main` is the "
        "app's table for the driver, `shared` the data, the CPU kernel, seq and the verifier; "
        "apps/common/cluster_* (the driver, %d lines) is not counted.\n" % common,
        loc_table])

report_node() if mode == "node" else report_cluster()
PYEOF
    rm -rf "$out"
}

case "${1:-}" in
    node|cluster) bench "$@" ;;
    -h|--help|"") usage; [ -n "${1:-}" ] || exit 2 ;;
    *) echo "bench-apps: unknown mode '$1' (see scripts/bench-apps.sh --help)" >&2; exit 2 ;;
esac
