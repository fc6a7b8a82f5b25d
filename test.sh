#!/usr/bin/env bash
# Install what is missing (the build's packages and the tests': doxygen, ffmpeg, ...),
# build, and run every test with ctest. Exit non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh --test
# the tools are installed: a test that lacks one fails instead of being skipped
export UTC_REQUIRE_TEST_TOOLS=1
scripts/build.sh "$@"
cd build
set +e
ctest --output-on-failure --timeout 600 -j 1 2>&1 | tee ctest.log
rc=${PIPESTATUS[0]}
set -e
echo
grep -E "tests passed|tests failed" ctest.log | tail -1
# Then the address/undefined sanitizer pass (build-asan; UTC_CI_SANITIZE=0 skips it).
if [ "$rc" = 0 ] && [ "${UTC_CI_SANITIZE:-1}" != 0 ]; then
    ../scripts/check.sh asan || rc=$?
fi
exit "$rc"
