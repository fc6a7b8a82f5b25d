#!/usr/bin/env bash
# check_man.sh SRC BUILD RYR UTCRUN WORK: the man pages of doc/man/.
# - groff formats each without a warning;
# - each page documents every option its program's --help lists, and no other;
# - `cmake --install BUILD --component man` installs them in share/man/man1.
# groff comes with scripts/install-deps.sh --test; without it the formatting check is
# skipped (or fails, with UTC_REQUIRE_TEST_TOOLS=1), the rest still runs.
set -u
src=$1 build=$2 ryr=$3 utcrun=$4 work=$5
rm -rf "$work"
mkdir -p "$work"
fails=0 passes=0
fail() { echo "FAILED: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; passes=$((passes + 1)); }

if command -v groff >/dev/null; then
    for page in utcrun ryr; do
        warnings=$(groff -man -Tutf8 -ww -z "$src/doc/man/$page.1" 2>&1)
        [ -z "$warnings" ] && ok "$page.1: groff formats it without a warning" ||
            fail "$page.1: groff: $warnings"
    done
elif [ "${UTC_REQUIRE_TEST_TOOLS:-0}" = 1 ]; then
    fail "groff is not installed (scripts/install-deps.sh --test installs it)"
else
    echo "skipped: formatting (no groff)"
fi

# long options: from --help, and from the page's text (roff writes - as \-)
options() { grep -oE -- '--[a-z][a-z-]*[a-z]' | sort -u; }
compare() {
    local page=$1 help=$2
    local documented
    documented=$(sed 's/\\-/-/g' "$src/doc/man/$page.1" | options)
    missing=$(comm -23 <(options <<<"$help") <(echo "$documented"))
    [ -z "$missing" ] && ok "$page.1 documents every option of $page --help" ||
        fail "$page.1 lacks: $missing"
    # the page's OPTIONS section names no option that --help does not know
    extra=$(comm -13 <(options <<<"$help") <(sed -n '/^\.SH OPTIONS/,/^\.SH /p' \
        "$src/doc/man/$page.1" | sed 's/\\-/-/g' | options))
    [ -z "$extra" ] && ok "$page.1: no option that $page --help does not list" ||
        fail "$page.1 documents options $page does not have: $extra"
}
compare ryr "$("$ryr" --help)"
compare utcrun "$("$utcrun" --help)"

cmake=${CMAKE:-cmake}
if "$cmake" --install "$build" --prefix "$work/prefix" --component man >"$work/install.log" 2>&1; then
    for page in utcrun ryr; do
        cmp -s "$src/doc/man/$page.1" "$work/prefix/share/man/man1/$page.1" &&
            ok "cmake --install: share/man/man1/$page.1" ||
            fail "cmake --install did not install share/man/man1/$page.1: $(cat "$work/install.log")"
    done
else
    fail "cmake --install --component man: $(cat "$work/install.log")"
fi
echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
