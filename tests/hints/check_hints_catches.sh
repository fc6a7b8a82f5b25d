#!/usr/bin/env bash
# check-hints.py must fail on hints that name what does not exist: copy the library's
# folders, add messages that name a missing function (whole, and split over adjacent
# literals), build one with "%s_by", glue a suffix literal, and expect each named; a
# documented non-function and a real name must pass.
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in framework conduits gshared gpu runtime include; do cp -r "$src/$d" "$tmp/"; done
cat >>"$tmp/conduits/api.c" <<'C'

/* added by check_hints_catches.sh */
static utc_status_t hint_missing(void)
{
    return utc__error(UTC_ERR_STATE, "x: call utc_conduit_frobnicate_by instead"); /* A */
}
static utc_status_t hint_split(void)
{
    return utc__error(UTC_ERR_STATE, "x: call utc_conduit_"
                                     "read_sideways"); /* B: one literal to the compiler */
}
static utc_status_t hint_real(void)
{
    return utc__error(UTC_ERR_STATE, "x: call utc_conduit_read_from_by"); /* passes */
}
C
cat >>"$tmp/gshared/gshared_module.c" <<'C'

/* added by check_hints_catches.sh */
static void hint_formatted(const char *fn)
{
    utc_log(UTC_LOG_ERROR, "%s: or use %s_from", fn, fn); /* C */
    utc_log(UTC_LOG_ERROR, "%s: or use %s%s", fn, fn, "_to"); /* D */
}
C
if out=$(python3 "$src/scripts/check-hints.py" "$tmp"); then
    echo "check-hints passed a tree with hints that name no function:"; echo "$out"; exit 1
fi
echo "$out"
grep -q 'conduits/api.c:[0-9]*: names utc_conduit_frobnicate_by' <<<"$out"
grep -q 'conduits/api.c:[0-9]*: names utc_conduit_read_sideways' <<<"$out"
grep -q 'gshared/gshared_module.c:[0-9]*: "%s_from" builds a function name' <<<"$out"
grep -q 'gshared/gshared_module.c:[0-9]*: "_to" builds a function name' <<<"$out"
if grep -q 'utc_conduit_read_from_by\|utc_conduit_$' <<<"$out"; then
    echo "check-hints refused a real name or a half of a split one"; exit 1
fi
[ "$(grep -c 'names \|builds a function name' <<<"$out")" = 4 ] ||
    { echo "check-hints reported other problems than the four added"; exit 1; }
echo "check-hints caught all four"
