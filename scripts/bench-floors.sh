#!/usr/bin/env bash
# What the hardware alone costs, as floors for the conduits' small-message latency
# (doc/PERFORMANCE.md, "Fine-grained overhead"):
#
#   scripts/bench-floors.sh [--reps N]
#
# - line:  one 64-byte line passed back and forth between two threads pinned to CPUs 0 and
#          1, each spinning on the other's line: the least an in-process message between
#          two cores can cost one way (no lock, no tag, no request);
# - pause: one x86 PAUSE (the spin-wait hint between polls);
# - clock: one clock_gettime(CLOCK_MONOTONIC);
# - lock add, mutex: an uncontended atomic add, an uncontended pthread mutex lock + unlock.
#
# Prints one line per repetition; compile with cc -O2 in a temporary folder.
set -euo pipefail
reps=3
while [ $# -gt 0 ]; do
    case "$1" in
        --reps) reps=${2:?--reps needs a number}; shift 2 ;;
        -h|--help) sed -n '2,/^set /s/^# \{0,1\}//p' "$0" | grep -v '^set '; exit 0 ;;
        *) echo "bench-floors: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ "$(nproc)" -ge 2 ] || { echo "bench-floors: needs 2 CPUs" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/floors.c" <<'EOF'
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#define N 2000000
static _Alignas(64) atomic_long ping;
static _Alignas(64) atomic_long pong;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *ponger(void *arg)
{
    (void)arg;
    pin(1);
    for (long i = 1; i <= N; i++) {
        while (atomic_load_explicit(&ping, memory_order_acquire) != i)
            ;
        atomic_store_explicit(&pong, i, memory_order_release);
    }
    return NULL;
}

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, ponger, NULL);
    pin(0);
    double t0 = now();
    for (long i = 1; i <= N; i++) {
        atomic_store_explicit(&ping, i, memory_order_release);
        while (atomic_load_explicit(&pong, memory_order_acquire) != i)
            ;
    }
    double line = (now() - t0) / N / 2 * 1e9;
    pthread_join(t, NULL);
    t0 = now();
    for (int i = 0; i < 10000000; i++)
        relax();
    double pause = (now() - t0) / 1e7 * 1e9;
    t0 = now();
    for (int i = 0; i < 1000000; i++)
        now();
    double clock = (now() - t0) / 1e6 * 1e9;
    atomic_int x = 0;
    t0 = now();
    for (int i = 0; i < 10000000; i++)
        atomic_fetch_add(&x, 1);
    double add = (now() - t0) / 1e7 * 1e9;
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    t0 = now();
    for (int i = 0; i < 10000000; i++) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
    }
    double mutex = (now() - t0) / 1e7 * 1e9;
    printf("line %.1f ns one way  pause %.1f ns  clock %.1f ns  lock add %.1f ns  mutex %.1f ns\n",
           line, pause, clock, add, mutex);
    return 0;
}
EOF
cc -O2 -o "$tmp/floors" "$tmp/floors.c" -lpthread
echo "bench-floors: load average $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$reps"); do
    "$tmp/floors"
done
