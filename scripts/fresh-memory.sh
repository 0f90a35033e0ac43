#!/usr/bin/env bash
# What fresh memory costs on this machine right now: maps MIB MiB (256), touches every 4 KB page
# once, unmaps it, ROUNDS times (4), and prints the ns per 4 KB page of each round; first with
# 4 KB pages, then advised MADV_HUGEPAGE, each back to back and then with PAUSE seconds (4)
# between rounds. An hbg build touches about 230 MiB of fresh memory per million tasks, so a
# measurement taken while this reads high measures the host, not the runtime
# (`docs/performance.md`, "How to reproduce").
#
#   bash scripts/fresh-memory.sh [MIB (256)] [ROUNDS (4)] [PAUSE (4)]
set -euo pipefail
mib=${1:-256} rounds=${2:-4} pause=${3:-4}
for arg in "mib=$mib" "rounds=$rounds" "pause=$pause"; do
  [[ ${arg#*=} =~ ^[0-9]+$ ]] || { echo "fresh-memory.sh: ${arg%%=*} must be a whole number, got '${arg#*=}'" >&2; exit 2; }
done
((mib > 0 && rounds > 0)) || { echo "fresh-memory.sh: MIB and ROUNDS must be at least 1" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/touch.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
    size_t bytes = (size_t)atol(argv[1]) << 20, huge = 2u << 20;
    int rounds = atoi(argv[2]), advise = atoi(argv[3]), pause = atoi(argv[4]);
    printf("%-10s pause %2d s:", advise ? "huge pages" : "4 KB pages", pause);
    for (int r = 0; r < rounds; r++) {
        if (pause) sleep(pause);
        double start = now_ns();
        char *map = mmap(NULL, bytes + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (map == MAP_FAILED) { perror("mmap"); return 1; }
        char *p = (char *)(((unsigned long)map + huge - 1) & ~(unsigned long)(huge - 1));
        if (advise) madvise(p, bytes, MADV_HUGEPAGE);
        for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
        double ns = now_ns() - start;
        munmap(map, bytes + huge);
        printf(" %8.0f", ns / (bytes / 4096));
        fflush(stdout);
    }
    printf("  ns per 4 KB page\n");
    return 0;
}
EOF
gcc -O2 -o "$dir/touch" "$dir/touch.c"
echo "fresh memory, $mib MiB a round, $rounds rounds"
pauses=(0)
((pause > 0)) && pauses+=("$pause")
for advise in 0 1; do
  for p in "${pauses[@]}"; do
    "$dir/touch" "$mib" "$rounds" "$advise" "$p"
  done
done
