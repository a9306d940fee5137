/* Reference STREAM triad for scripts/bench-vs-likwid.sh: a small,
 * independent C program written for numaprobe after the method of John
 * McCalpin's STREAM (three arrays of doubles, a[i] = b[i] + s * c[i],
 * 24 bytes counted per element, OpenMP static schedule, first touch by the
 * threads that use the data, the best of NTIMES timed repetitions after
 * one untimed one, results validated). Built by the script with Debian's
 * gcc: gcc -O3 -march=native -fopenmp.
 *
 * usage: stream ARRAY_BYTES [PAGES=4k|thp] [NTIMES=20]
 * prints: best_gbs=B avg_gbs=A min_s=t threads=n pages=P
 * (GB/s = 1e9 bytes/s, as STREAM's MB/s = 1e6 bytes/s.)
 */
#define _GNU_SOURCE
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* An array on its own 2 MiB-aligned mapping, THP asked for or refused. */
static double *array(size_t bytes, int thp) {
  size_t align = 2u << 20, len = (bytes + align - 1) / align * align + align;
  char *raw = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) { perror("mmap"); exit(1); }
  char *p = (char *)(((uintptr_t)raw + align - 1) / align * align);
  if (madvise(p, len - align, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) { perror("madvise"); exit(1); }
  return (double *)p;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s ARRAY_BYTES [4k|thp] [NTIMES]\n", argv[0]);
    return 2;
  }
  size_t n = strtoull(argv[1], 0, 0) / sizeof(double);
  const char *pages = argc > 2 ? argv[2] : "4k";
  int ntimes = argc > 3 ? atoi(argv[3]) : 20;
  int thp = !strcmp(pages, "thp");
  if (!thp && strcmp(pages, "4k")) { fprintf(stderr, "pages must be 4k or thp\n"); return 2; }
  if (ntimes < 2) ntimes = 2;
  double *a = array(n * sizeof(double), thp);
  double *b = array(n * sizeof(double), thp);
  double *c = array(n * sizeof(double), thp);
  const double s = 3.0;
  size_t i;
  /* first touch by the threads that will use each part (static schedule) */
#pragma omp parallel for schedule(static)
  for (i = 0; i < n; i++) { a[i] = 1.0; b[i] = 2.0; c[i] = 0.5; }
  double best = 1e30, total = 0;
  for (int k = 0; k < ntimes; k++) {
    double t0 = now_s();
#pragma omp parallel for schedule(static)
    for (i = 0; i < n; i++) a[i] = b[i] + s * c[i];
    double t = now_s() - t0;
    if (k > 0) { /* the first repetition is the untimed warm-up */
      total += t;
      if (t < best) best = t;
    }
  }
  /* validate: every a[i] must be 2 + 3 * 0.5 = 3.5 */
  size_t bad = 0;
#pragma omp parallel for schedule(static) reduction(+ : bad)
  for (i = 0; i < n; i++) bad += fabs(a[i] - 3.5) > 1e-12;
  if (bad) { fprintf(stderr, "triad validation failed: %zu wrong elements\n", bad); return 1; }
  double bytes = 3.0 * sizeof(double) * (double)n;
  printf("best_gbs=%.3f avg_gbs=%.3f min_s=%.6f threads=%d pages=%s\n", bytes / best / 1e9,
         bytes / (total / (ntimes - 1)) / 1e9, best, omp_get_max_threads(), pages);
  return 0;
}
