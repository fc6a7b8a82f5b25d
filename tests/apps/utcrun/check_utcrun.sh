#!/usr/bin/env bash
# check_utcrun.sh UTCRUN CASE: scripts/utcrun from the outside, one case per ctest test.
#   help         --help is the header comment and nothing of the script's code
#   dry-run      --dry-run prints the mpirun command, runs nothing
#   passthrough  mpirun options utcrun does not know reach mpirun, before the program
#   own          utcrun's own options still work among them; -- ends the options
#   errors       an mpirun option without its value is refused by utcrun; an option
#                mpirun does not know either is refused by mpirun
#   slurm        inside a Slurm allocation (SLURM_* variables, a stand-in srun on the
#                PATH) it launches with srun --mpi=pmix, translates mpirun's options,
#                refuses -np beyond the job; outside, or without pmix, mpirun
#                (scripts/slurm-cluster.sh runs it under a real Slurm)
set -u
utcrun=$1 case=$2
# the command lines checked below are utcrun's own: no extra mpirun arguments from the
# environment (the sanitizer pass sets UTC_MPIRUN_ARGS to forward its options)
unset UTC_MPIRUN_ARGS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
fail() { echo "FAILED: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; passes=$((passes + 1)); }

# run CMD...: stdout+stderr in $out, exit status in $rc (no hang: 60 s at most)
run() {
    out=$(timeout 60 "$@" 2>&1)
    rc=$?
}
# has WHAT NEEDLE: $out contains the fixed string NEEDLE
has() {
    if grep -qF -- "$2" <<<"$out"; then ok "$1"; else fail "$1: no '$2' in: $(head -c 600 <<<"$out")"; fi
}
status() {
    if [ "$rc" = "$2" ]; then ok "$1: exit $rc"; else fail "$1: exit $rc, expected $2: $(head -c 600 <<<"$out")"; fi
}

case "$case" in
help)
    run "$utcrun" --help
    status "--help" 0
    has "--help: the usage line" "utcrun [-np N]"
    has "--help: mpirun options go through" "Any other option goes to mpirun"
    has "--help: --dry-run" "--dry-run"
    if grep -qE "set -euo|^usage\(\)|^np=|\\\$\(|^\s*case " <<<"$out"; then
        fail "--help shows the script's code: $(grep -E "set -euo|usage\(\)|^np=" <<<"$out")"
    else
        ok "--help: no line of code"
    fi
    [ "$(tail -n 1 <<<"$out")" = "See also: man utcrun." ] && ok "--help: ends with the header" ||
        fail "--help ends with '$(tail -n 1 <<<"$out")'"
    run "$utcrun" -h
    status "-h" 0
    ;;
dry-run)
    run "$utcrun" --dry-run -np 2 -x OMP_NUM_THREADS --map-by node "$tmp/no-such-app" a 'b c'
    status "--dry-run" 0
    has "--dry-run: the command and utcrun's options" "mpirun -np 2 --bind-to none "
    has "--dry-run: mpirun's options before the program, the program's arguments quoted" \
        "-x OMP_NUM_THREADS --map-by node $tmp/no-such-app a 'b c'"
    has "--dry-run: the environment utcrun sets" "UTC_LAUNCHER=utcrun"
    [ "$(wc -l <<<"$out")" = 1 ] && ok "--dry-run: one line" || fail "--dry-run: $(wc -l <<<"$out") lines"
    # it runs nothing: a program that would leave a file does not
    run "$utcrun" --dry-run -np 1 touch "$tmp/ran"
    [ ! -e "$tmp/ran" ] && ok "--dry-run runs nothing" || fail "--dry-run ran the program"
    # the same command runs for real (the dry run is what utcrun executes)
    run "$utcrun" --dry-run -np 1 -x UTC_DRY=1 sh -c 'echo "dry=$UTC_DRY"'
    cmd=$out
    run bash -c "$cmd"
    status "the printed command runs" 0
    has "the printed command runs the program" "dry=1"
    ;;
passthrough)
    # -x VAR=value: the variable is set by mpirun in each rank
    run "$utcrun" -np 2 -x UTC_PASSED=yes --map-by slot sh -c 'echo "passed=$UTC_PASSED"'
    status "-x VAR=value --map-by slot" 0
    [ "$(grep -c "passed=yes" <<<"$out")" = 2 ] && ok "-x reached both ranks" ||
        fail "-x: expected passed=yes twice: $out"
    # a flag without a value: --tag-output prefixes each line with the rank
    run "$utcrun" -np 2 --tag-output echo hello
    status "--tag-output" 0
    has "--tag-output reached mpirun (rank 0)" "[1,0]<stdout>:hello"
    has "--tag-output reached mpirun (rank 1)" "[1,1]<stdout>:hello"
    # --mca takes two values; one that utcrun sets itself replaces utcrun's (mpirun refuses
    # a parameter given twice)
    run "$utcrun" -np 1 --mca btl_base_warn_component_unused 1 --mca btl self,vader echo mca-ok
    status "--mca NAME VALUE twice, one of utcrun's" 0
    has "--mca: the program ran" "mca-ok"
    run "$utcrun" --dry-run -np 1 --mca btl_base_warn_component_unused 1 true
    [ "$(grep -o "btl_base_warn_component_unused" <<<"$out" | wc -l)" = 1 ] &&
        ok "--mca: utcrun's own setting left out" || fail "--mca given twice: $out"
    # --opt=value of an option utcrun does not list
    run "$utcrun" --dry-run -np 1 --some-future-option=3 ./app
    has "--opt=value goes through as one argument" "--some-future-option=3 ./app"
    # --bind-to of the user replaces utcrun's --bind-to none
    run "$utcrun" --dry-run -np 1 --bind-to core ./app
    if grep -q -- "--bind-to none" <<<"$out"; then fail "--bind-to core: utcrun added --bind-to none: $out"
    else has "--bind-to core goes through" "--bind-to core ./app"; fi
    # the program's own options are the program's
    run "$utcrun" -np 1 -x UTC_A=1 echo --tag-output -x
    status "options after the program" 0
    has "options after the program are its arguments" "--tag-output -x"
    ;;
own)
    run "$utcrun" -np 3 -x UTC_B=1 echo rank
    [ "$(grep -c "^rank$" <<<"$out")" = 3 ] && ok "-np 3 among mpirun options" || fail "-np 3: $out"
    run "$utcrun" -x UTC_B=1 -np 2 --verbose echo rank
    has "--verbose after an mpirun option" "utcrun: "
    has "--verbose prints the command" "mpirun -np 2"
    [ "$(grep -c "^rank$" <<<"$out")" = 2 ] && ok "-np 2 after an mpirun option" || fail "-np 2: $out"
    run "$utcrun" --dry-run --host localhost,localhost -np 2 ./app
    has "--host is utcrun's (one host: --oversubscribe)" "--host localhost,localhost --oversubscribe"
    run "$utcrun" -np 1 -- echo -np 5 --dry-run
    status "--" 0
    has "-- ends utcrun's options" "-np 5 --dry-run"
    run "$utcrun" --dry-run -np 1 -x A=1 -- --strange-name x
    has "-- then a program whose name starts with -" "-x A=1 --strange-name x"
    run "$utcrun" --version
    status "--version" 0
    has "--version" "utcrun (UTC)"
    ;;
errors)
    run "$utcrun" -np 1 -x
    status "-x without a value" 2
    has "-x without a value: utcrun says so" "utcrun: -x needs a value"
    run "$utcrun" -np 1 --map-by
    status "--map-by without a value" 2
    has "--map-by without a value" "utcrun: --map-by needs a value"
    run "$utcrun" -np 1 --mca btl
    status "--mca with one value" 2
    has "--mca with one value" "utcrun: --mca needs two values"
    run "$utcrun" -np 1 -x A=1
    status "no program" 2
    has "no program" "no program given"
    run "$utcrun" -np 0 -x A=1 true
    status "-np 0" 2
    run "$utcrun" -np 1 --no-such-mpirun-option true
    [ "$rc" != 0 ] && ok "an option mpirun does not know: exit $rc" || fail "unknown option accepted"
    has "an option mpirun does not know: mpirun says so" 'unknown option "--no-such-mpirun-option"'
    ;;
slurm)
    # a stand-in srun: answers --mpi=list, else prints its arguments and UTC's variables
    mkdir -p "$tmp/bin"
    cat >"$tmp/bin/srun" <<'EOS'
#!/bin/sh
if [ "$1" = --mpi=list ]; then printf 'MPI plugin types are...\n\tnone\n\t%s\n' "${FAKE_MPI_LIST:-pmix}"; exit 0; fi
echo "srun-ran $* warn=${OMPI_MCA_btl_base_warn_component_unused:-} launcher=${UTC_LAUNCHER:-} a=${A:-}"
EOS
    chmod +x "$tmp/bin/srun"
    export PATH="$tmp/bin:$PATH"
    unset SLURM_JOB_ID SLURM_NTASKS SLURM_NPROCS SLURM_CPUS_PER_TASK SLURM_JOB_CPUS_PER_NODE \
        SLURM_JOB_NUM_NODES SLURM_NNODES UTCRUN_LAUNCHER UTC_SRUN_ARGS
    run "$utcrun" --dry-run -np 2 ./app
    has "outside a job: mpirun" "mpirun -np 2 --bind-to none"
    job=(env SLURM_JOB_ID=42 SLURM_NTASKS=2 SLURM_CPUS_PER_TASK=3)
    run "${job[@]}" "$utcrun" --dry-run -np 2 ./app 'b c'
    status "in a job: --dry-run" 0
    has "in a job: srun --mpi=pmix, --cpus-per-task passed on" \
        "srun --mpi=pmix -n 2 --cpus-per-task=3 ./app 'b c'"
    run "${job[@]}" "$utcrun" -np 2 -x A=1 ./app
    status "in a job: runs srun" 0
    has "in a job: srun ran, with utcrun's variables and -x NAME=VALUE" \
        "srun-ran --mpi=pmix -n 2 --cpus-per-task=3 ./app warn=0 launcher=utcrun a=1"
    run "${job[@]}" "$utcrun" --dry-run -np 1 -x OMP_NUM_THREADS --mca btl self --bind-to core \
        --oversubscribe ./app
    has "mpirun's options translated" \
        "OMPI_MCA_btl=self srun --mpi=pmix -n 1 --cpus-per-task=3 --cpu-bind=cores --overcommit ./app"
    run "${job[@]}" SLURM_JOB_NUM_NODES=2 "$utcrun" --dry-run -np 2 ./app
    has "2 nodes: the TCP transports" "OMPI_MCA_osc=ucx OMPI_MCA_btl=tcp,self OMPI_MCA_pml=ob1 srun"
    run "${job[@]}" UTC_SRUN_ARGS="-l --exclusive" "$utcrun" --dry-run -np 2 ./app
    has "UTC_SRUN_ARGS" "srun --mpi=pmix -n 2 --cpus-per-task=3 -l --exclusive ./app"
    run "${job[@]}" "$utcrun" -np 3 ./app
    status "-np 3 in a 2-task job" 2
    has "-np 3 in a 2-task job: the message" \
        "utcrun: -np 3 is more ranks than Slurm job 42 holds: 2 tasks (SLURM_NTASKS)"
    run env SLURM_JOB_ID=42 SLURM_JOB_CPUS_PER_NODE="2(x2),1" SLURM_CPUS_PER_TASK=2 \
        "$utcrun" --dry-run -np 3 ./app
    status "-np 3 with room for 2 tasks of 2 CPUs" 2
    has "-np 3 with room for 2: the message" "5 CPUs, room for 2 tasks of 2"
    run env SLURM_JOB_ID=42 SLURM_JOB_CPUS_PER_NODE="2(x2),1" "$utcrun" --dry-run -np 5 ./app
    status "-np 5 in 5 CPUs" 0
    run "${job[@]}" "$utcrun" --dry-run -np 2 --map-by node ./app
    status "an mpirun option with no srun meaning" 2
    has "an mpirun option with no srun meaning: the message" "mpirun's option '--map-by' has no meaning there"
    run "${job[@]}" "$utcrun" --dry-run -np 2 --host a,b ./app
    status "--host in a job" 2
    run "${job[@]}" "$utcrun" --dry-run --launcher mpirun -np 2 ./app
    has "--launcher mpirun in a job" "mpirun -np 2 --bind-to none"
    run "${job[@]}" UTCRUN_LAUNCHER=mpirun "$utcrun" --dry-run -np 2 ./app
    has "UTCRUN_LAUNCHER=mpirun in a job" "mpirun -np 2 --bind-to none"
    run "${job[@]}" FAKE_MPI_LIST=pmi2 "$utcrun" --dry-run -np 2 ./app
    has "a Slurm without pmix: mpirun" "mpirun -np 2 --bind-to none"
    run "$utcrun" --launcher srun -np 1 ./app
    status "--launcher srun outside a job" 2
    has "--launcher srun outside a job: the message" "needs a Slurm allocation"
    run "$utcrun" --launcher=ssh -np 1 ./app
    status "--launcher of another name" 2
    ;;
*)
    echo "check_utcrun.sh: unknown case '$case'" >&2
    exit 2 ;;
esac
echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
