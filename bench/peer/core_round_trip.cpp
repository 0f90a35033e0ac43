// The machine's phase, for reading the peer table: the round trip of one cache line between
// two threads pinned to CPUs 0 and 1 (each writes the line, then waits to see the other's
// write). tmr's orchestrator and scheduler, and OpenMP's two threads, hand lines to each
// other for every task, so their ns per task follow this figure: on one 2-vCPU machine of
// session 38 it read ≈ 53 ns in some phases and 325–480 ns in others (the host placing the
// two vCPUs near or far apart), and tmr independent read ≈ 94 and 170–290 ns with it.
//
//   g++ -O2 -pthread -o core_round_trip core_round_trip.cpp
//   ./core_round_trip [ROUND_TRIPS (1000000)]
//
// Prints `<ns per round trip>`, the median of 5 batches; `n/a` when the process may not run
// on both CPUs 0 and 1.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

alignas(64) static std::atomic<long> line{0};

static bool pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// One batch of `n` round trips from `start` (odd values are this side's, even the other's).
static double batch(long start, long n) {
  std::atomic<bool> pinned{true};
  std::thread other([&] {
    if (!pin(1)) pinned = false;
    for (long i = 0; i < n; i++) {
      long want = start + 2 * i + 1;
      while (line.load(std::memory_order_acquire) != want) {
        if (!pinned) return;
      }
      line.store(want + 1, std::memory_order_release);
    }
  });
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n && pinned; i++) {
    line.store(start + 2 * i + 1, std::memory_order_release);
    while (line.load(std::memory_order_acquire) != start + 2 * i + 2) {
      if (!pinned) break;
    }
  }
  auto t1 = std::chrono::steady_clock::now();
  other.join();
  if (!pinned) return -1;
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? std::atol(argv[1]) : 1000000;
  if (n <= 0 || !pin(0)) {
    std::puts("n/a");
    return 0;
  }
  std::vector<double> ns;
  long start = 0;
  for (int b = 0; b < 5; b++) {
    double x = batch(start, n / 5 + 1);
    if (x < 0) {
      std::puts("n/a");
      return 0;
    }
    ns.push_back(x);
    start = line.load();
  }
  std::sort(ns.begin(), ns.end());
  std::printf("%.1f\n", ns[2]);
}
