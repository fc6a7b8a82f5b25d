#!/usr/bin/env bash
# The layering check must fail on an include that points up: copy the library's folders,
# make base/ include a task-layer header, and expect check-layers.py to name it.
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in framework conduits gshared gpu runtime; do cp -r "$src/$d" "$tmp/"; done
echo '#include "tasks/task_internal.h"' >> "$tmp/framework/base/sync.c"
echo '#include "../mpi/mpi_transport.c"' >> "$tmp/conduits/shm/shm_transport.c"
if out=$(python3 "$src/scripts/check-layers.py" "$tmp"); then
    echo "check-layers passed a tree with upward includes:"; echo "$out"; exit 1
fi
echo "$out"
grep -q 'framework/base/sync.c:.*includes framework/tasks/task_internal.h' <<<"$out"
grep -q 'conduits/shm/shm_transport.c:.*includes conduits/mpi/mpi_transport.c' <<<"$out"
echo "check-layers caught both"
