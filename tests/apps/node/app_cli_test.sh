#!/usr/bin/env bash
# Command-line checks of the single-node apps (rotate, yuv, raytrace, md5, bfs).
#
#   app_cli_test.sh verify   UTCRUN APP BIN IMPL [THREADS [MEMTYPE]]
#                                                  size S --verify --json: exit 0, verified
#   app_cli_test.sh md5sum   UTCRUN BIN             digests equal md5sum's (--dump, --input)
#   app_cli_test.sh graphs   UTCRUN BIN DIR         hand-made graphs: levels as DIR/*.levels
#   app_cli_test.sh bad      UTCRUN APP BIN         bad command lines and input files refused
#   app_cli_test.sh nogpu    UTCRUN APP BIN         --impl gpu without a GPU: exit 3, a message
#   app_cli_test.sh help     UTCRUN APP BIN         --help, --version
#
# utc and gpu runs go through utcrun -np 1. Exit 0 pass, 1 fail, 77 skipped (a gpu run
# without a usable GPU fails instead under UTC_REQUIRE_GPU=1).
set -u
. "$(dirname "$0")/../../common/gpu_skip.sh"

mode=$1 utcrun=$2
shift 2
fails=0
tmp=$(mktemp -d /tmp/utc-app-test-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# run IMPL BIN ARGS...: the app, through utcrun for utc and gpu; stdout in $tmp/out,
# stderr in $tmp/err, exit status in $rc.
run() {
    local impl=$1 bin=$2
    shift 2
    if [ "$impl" = utc ] || [ "$impl" = gpu ]; then
        "$utcrun" -np 1 "$bin" --impl "$impl" "$@" >"$tmp/out" 2>"$tmp/err"
    else
        "$bin" --impl "$impl" "$@" >"$tmp/out" 2>"$tmp/err"
    fi
    rc=$?
}

# expect_refused WHAT NEEDLE IMPL BIN ARGS...: a non-zero exit with NEEDLE in the message.
expect_refused() {
    local what=$1 needle=$2
    shift 2
    run "$@"
    if [ "$rc" = 0 ]; then
        fail "$what: accepted (exit 0)"
    elif ! grep -qi -- "$needle" "$tmp/err"; then
        fail "$what: exit $rc but the message lacks '$needle': $(head -c 300 "$tmp/err")"
    else
        echo "ok: $what (exit $rc): $(head -n 1 "$tmp/err")"
    fi
}

case "$mode" in
verify)
    # optional 4th and 5th: the GPU task's threads and --memtype
    app=$1 bin=$2 impl=$3 threads=${4:-} memtype=${5:-}
    if [ -z "$threads" ]; then
        threads=2
        [ "$impl" = gpu ] && threads=1 # bfs takes one GPU thread; one device here at most
    fi
    extra=()
    [ -z "$memtype" ] || extra=(--memtype "$memtype")
    run "$impl" "$bin" --size S --threads "$threads" "${extra[@]}" --verify --json
    if [ "$impl" = gpu ] && [ "$rc" = 3 ]; then
        gpu_skip "$(head -n 1 "$tmp/err")"
    fi
    cat "$tmp/out"
    [ "$rc" = 0 ] || fail "$app --impl $impl: exit $rc: $(cat "$tmp/err")"
    last=$(tail -n 1 "$tmp/out")
    for key in '"app": "'"$app"'"' '"impl": "'"$impl"'"' '"size": "S"' '"threads": ' \
        '"seconds": ' '"verified": true'; do
        case "$last" in *"$key"*) ;; *) fail "JSON line lacks $key: $last" ;; esac
    done
    ;;
md5sum)
    bin=$1
    command -v md5sum >/dev/null || { echo "SKIPPED: no md5sum"; exit 77; }
    for impl in seq omp utc; do
        # odd buffer sizes around the padding edges, seeded buffers
        for size in 37x1000 5x55 5x56 3x64 4x119 2x4K; do
            rm -rf "$tmp/d"
            run "$impl" "$bin" --size "$size" --seed 7 --threads 2 --dump "$tmp/d"
            [ "$rc" = 0 ] || { fail "$impl $size: exit $rc: $(cat "$tmp/err")"; continue; }
            (cd "$tmp/d" && md5sum -c --quiet md5sums.txt) ||
                fail "$impl $size: md5sum -c disagrees"
            (cd "$tmp/d" && md5sum buf_*.bin | diff -q - md5sums.txt >/dev/null) ||
                fail "$impl $size: md5sum's list differs"
        done
        # a file cut into 100-byte buffers (the last one 77 bytes) against split + md5sum
        head -c 1077 /dev/urandom >"$tmp/file.bin"
        run "$impl" "$bin" --input "$tmp/file.bin" --size 1x100 --output "$tmp/sums.txt"
        [ "$rc" = 0 ] || fail "$impl --input: exit $rc: $(cat "$tmp/err")"
        rm -rf "$tmp/split" && mkdir "$tmp/split"
        (cd "$tmp/split" && split -b 100 -a 3 -d "$tmp/file.bin" part_ &&
            md5sum part_* | awk '{print $1}') >"$tmp/want.txt"
        awk '{print $1}' "$tmp/sums.txt" | diff -q - "$tmp/want.txt" >/dev/null ||
            fail "$impl --input: digests differ from split + md5sum"
        echo "ok: md5 --impl $impl agrees with md5sum"
    done
    ;;
graphs)
    bin=$1 dir=$2
    for g in "$dir"/*.txt; do
        want=${g%.txt}.levels
        for impl in seq omp utc; do
            for t in 1 3; do
                run "$impl" "$bin" --input "$g" --threads "$t" --verify --output "$tmp/levels"
                if [ "$rc" != 0 ]; then
                    fail "$(basename "$g") $impl x$t: exit $rc: $(cat "$tmp/err")"
                elif ! diff -q "$tmp/levels" "$want" >/dev/null; then
                    fail "$(basename "$g") $impl x$t: levels differ from $(basename "$want")"
                fi
            done
        done
        # --output -: the levels on stdout, then the JSON line last
        run seq "$bin" --input "$g" --output - --json
        head -n -1 "$tmp/out" | diff -q - "$want" >/dev/null ||
            fail "$(basename "$g") --output -: stdout differs from $(basename "$want")"
        tail -n 1 "$tmp/out" | grep -q '^{"app": "bfs"' || fail "--output -: JSON not last"
        echo "ok: $(basename "$g")"
    done
    ;;
bad)
    app=$1 bin=$2
    expect_refused "unknown impl" "unknown --impl" seq "$bin" --impl cuda
    expect_refused "unknown size" "unknown size" seq "$bin" --size XL
    expect_refused "zero size" "positive" seq "$bin" --size 0x16
    expect_refused "negative size" "positive" seq "$bin" --size -8x16
    expect_refused "size with no x" "unknown size" seq "$bin" --size 1000
    expect_refused "zero threads" "--threads" omp "$bin" --threads 0
    expect_refused "negative threads" "--threads" utc "$bin" --threads -3
    expect_refused "unknown memtype" "unknown --memtype" seq "$bin" --memtype shared
    expect_refused "unknown option" "unknown option" seq "$bin" --frobnicate
    expect_refused "missing value" "needs a value" seq "$bin" --seed
    expect_refused "unreadable input" "cannot open" seq "$bin" --input "$tmp/none/such.file"
    expect_refused "input is a folder" "$tmp" seq "$bin" --input "$tmp"
    case "$app" in
    md5)
        : >"$tmp/empty"
        expect_refused "empty input file" "empty" seq "$bin" --input "$tmp/empty"
        expect_refused "absurd size" "memory" seq "$bin" --size 1Gx1G
        ;;
    bfs)
        printf '0 1\n1 2 3\n' >"$tmp/g1" && printf '0 1\nfoo bar\n' >"$tmp/g2"
        printf -- '-1 4\n' >"$tmp/g3" && : >"$tmp/g4"
        expect_refused "edge with 3 fields" "g1:2:" seq "$bin" --input "$tmp/g1"
        expect_refused "edge not numbers" "g2:2:" utc "$bin" --input "$tmp/g2"
        expect_refused "negative vertex" "out of range" seq "$bin" --input "$tmp/g3"
        expect_refused "empty edge list" "no edges" omp "$bin" --input "$tmp/g4"
        expect_refused "absurd size" "memory" seq "$bin" --size 1Gx1000G
        ;;
    rotate | yuv)
        echo "not an image" >"$tmp/t.ppm"
        printf 'P6\n4 4\n255\nabc' >"$tmp/short.ppm"
        printf 'P6\n0 4\n255\n' >"$tmp/zero.ppm"
        expect_refused "not a PNM file" "t.ppm" seq "$bin" --input "$tmp/t.ppm"
        expect_refused "truncated PPM" "short.ppm" utc "$bin" --input "$tmp/short.ppm"
        expect_refused "zero-width PPM" "zero.ppm" seq "$bin" --input "$tmp/zero.ppm"
        expect_refused "absurd size" "at most" seq "$bin" --size 100000x10
        if [ "$app" = yuv ]; then
            printf 'P5\n2 2\n255\nabcd' >"$tmp/gray.pgm"
            expect_refused "gray image to yuv" "RGB" seq "$bin" --input "$tmp/gray.pgm"
        else
            expect_refused "angle not a number" "--angle" seq "$bin" --angle thirty
            expect_refused "infinite angle" "--angle" seq "$bin" --angle inf
        fi
        ;;
    raytrace)
        printf 's 1 2\n' >"$tmp/s1" && printf 's 0 0 0 1 1 1 1 1 0\nl 0 5 0\n' >"$tmp/s2"
        printf 'q 1 2 3\n' >"$tmp/s3"
        expect_refused "sphere with missing fields" "s1:1:" seq "$bin" --input "$tmp/s1"
        expect_refused "scene with no camera" "camera" utc "$bin" --input "$tmp/s2"
        expect_refused "unknown scene line" "s3:1:" seq "$bin" --input "$tmp/s3"
        expect_refused "absurd size" "at most" seq "$bin" --size 100000x10
        ;;
    esac
    ;;
nogpu)
    app=$1 bin=$2
    run gpu "$bin" --size S
    if [ "$rc" = 0 ]; then
        echo "SKIPPED: this machine has a GPU (--impl gpu ran)"
        exit 77
    fi
    [ "$rc" = 3 ] || fail "--impl gpu without a GPU: exit $rc, want 3"
    grep -qi "gpu" "$tmp/err" || fail "--impl gpu: no message about the GPU: $(cat "$tmp/err")"
    echo "ok: $(head -n 1 "$tmp/err")"
    ;;
help)
    app=$1 bin=$2
    "$bin" --help >"$tmp/out" 2>&1 || fail "--help: exit $?"
    for word in "Usage: $app" --impl --threads --size --memtype --verify --json --seed; do
        grep -q -- "$word" "$tmp/out" || fail "--help lacks '$word'"
    done
    "$bin" --version >"$tmp/out" 2>&1 || fail "--version: exit $?"
    grep -q "^$app (UTC) [0-9]" "$tmp/out" || fail "--version: $(cat "$tmp/out")"
    ;;
*)
    echo "app_cli_test.sh: unknown mode '$mode'" >&2
    exit 2
    ;;
esac
[ "$fails" = 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo PASSED
