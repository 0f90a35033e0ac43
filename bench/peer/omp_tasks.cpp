// The four `simpler bench` workloads as OpenMP tasks with `depend` clauses: the peer that
// infers dependencies from addresses as simpler infers them from slices. Task bodies are
// empty but for a check that their dependencies were honoured (a failed check exits 1).
//
//   g++ -O2 -fopenmp -o omp_tasks omp_tasks.cpp
//   OMP_NUM_THREADS=2 ./omp_tasks <independent|chain|fanout_fanin|tiled_gemm> <tasks>
//
// Prints `<workload> <tasks> <ns per task>`: wall time from the first task created to the last
// finished (one thread creates every task, as simpler's orchestrator submits them).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static void fail(const char* what, long a, long b) {
  std::fprintf(stderr, "dependency not honoured: %s (%ld != %ld)\n", what, a, b);
  std::exit(1);
}

// Independent 2-argument tasks: read a[s], write b[s], s = i mod width.
static long independent(long n) {
  long width = std::min(n, 1L << 20);
  std::vector<float> a(width, 1.0f), b(width, 0.0f);
  float* pa = a.data();
  float* pb = b.data();
#pragma omp parallel
#pragma omp single
  for (long i = 0; i < n; i++) {
    long s = i % width;
#pragma omp task firstprivate(s) depend(in : pa[s]) depend(out : pb[s])
    { pb[s] = pa[s]; }
  }
  return n;
}

// One INOUT chain: task i must see the count i.
static long chain(long n) {
  long x = 0;
  long* px = &x;
#pragma omp parallel
#pragma omp single
  for (long i = 0; i < n; i++) {
#pragma omp task firstprivate(i) depend(inout : px[0])
    {
      if (*px != i) fail("chain", *px, i);
      *px = i + 1;
    }
  }
  return n;
}

// One writer, 64 readers, one joiner that reads all 64 results; repeated.
static long fanout_fanin(long n) {
  const long fan = 64;
  long rounds = (n + fan + 1) / (fan + 2);
  long x = -1;
  std::vector<long> y(fan * 16, -1);
  long* px = &x;
  long* py = y.data();
#pragma omp parallel
#pragma omp single
  for (long r = 0; r < rounds; r++) {
#pragma omp task firstprivate(r) depend(inout : px[0])
    { *px = r; }
    for (long j = 0; j < fan; j++) {
#pragma omp task firstprivate(r, j) depend(in : px[0]) depend(out : py[j * 16])
      {
        if (*px != r) fail("fan-out reader", *px, r);
        py[j * 16] = r;
      }
    }
#pragma omp task firstprivate(r) depend(iterator(j = 0 : 64), inout : py[j * 16])
    {
      for (long j = 0; j < fan; j++)
        if (py[j * 16] != r) fail("fan-in joiner", py[j * 16], r);
    }
  }
  return rounds * (fan + 2);
}

// C[i,j] += A[i,k]·B[k,j] over 16×16 tiles, K = 8 steps per output tile, in order.
static long tiled_gemm(long n) {
  const long K = 8;
  long tiles = std::max((n + K - 1) / K, 1L);
  long side = std::max((long)std::ceil(std::sqrt((double)tiles)), 1L);
  std::vector<long> a(side * K, 0), b(K * side, 0), c(side * side, 0);
  long* pa = a.data();
  long* pb = b.data();
  long* pc = c.data();
  (void)pa;  // used in the depend clauses only
  (void)pb;
  long made = 0;
#pragma omp parallel
#pragma omp single
  for (long i = 0; i < side; i++) {
    for (long j = 0; j < side && made < tiles; j++, made++) {
      for (long k = 0; k < K; k++) {
        long ct = i * side + j;
#pragma omp task firstprivate(i, j, k, ct) depend(in : pa[i * K + k], pb[k * side + j]) depend(inout : pc[ct])
        {
          if (pc[ct] != k) fail("tile accumulation", pc[ct], k);
          pc[ct] = k + 1;
        }
      }
    }
  }
  return made * K;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: omp_tasks <independent|chain|fanout_fanin|tiled_gemm> <tasks>\n");
    return 2;
  }
  long n = std::atol(argv[2]);
  if (n <= 0) {
    std::fprintf(stderr, "tasks must be positive\n");
    return 2;
  }
  auto t0 = std::chrono::steady_clock::now();
  long done;
  if (!std::strcmp(argv[1], "independent")) done = independent(n);
  else if (!std::strcmp(argv[1], "chain")) done = chain(n);
  else if (!std::strcmp(argv[1], "fanout_fanin")) done = fanout_fanin(n);
  else if (!std::strcmp(argv[1], "tiled_gemm")) done = tiled_gemm(n);
  else {
    std::fprintf(stderr, "unknown workload %s\n", argv[1]);
    return 2;
  }
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s %ld %.1f\n", argv[1], done, ns / (double)done);
  return 0;
}
