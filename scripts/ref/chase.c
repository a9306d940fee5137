/* Reference pointer chase for scripts/lat-vs-reference.sh: an independent,
 * deliberately plain C implementation of the same method numaprobe uses
 * (one element per stride, random order in groups of TLB_PAGES 4 KiB pages,
 * closed into one cycle, dependent loads timed with CLOCK_MONOTONIC).
 *
 * usage: chase SIZE_BYTES [STRIDE=64] [PAGES=4k|thp|2m|1g] [TLB_PAGES=64]
 *              [SAMPLES=11] [SAMPLE_MS=20] [CPU=-1]
 * prints: median_ns=M min_ns=m max_ns=x samples=n loads_per_sample=l
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

static uint64_t rng_state = 0x2545F4914F6CDD1DULL;
static uint64_t rnd(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1DULL;
}
static size_t below(size_t n) { return (size_t)(rnd() % n); }
static void shuffle(size_t *v, size_t n) {
  for (size_t i = n; i > 1; i--) {
    size_t j = below(i);
    size_t t = v[i - 1];
    v[i - 1] = v[j];
    v[j] = t;
  }
}
static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
void *volatile sink;

#define STEP p = *(void **)p;
#define STEP8 STEP STEP STEP STEP STEP STEP STEP STEP
static void *walk(void *p, uint64_t n) {
  uint64_t i;
  for (i = 0; i + 32 <= n; i += 32) { STEP8 STEP8 STEP8 STEP8 }
  for (; i < n; i++) { STEP }
  return p;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s SIZE [STRIDE] [4k|thp|2m|1g] [TLB_PAGES] [SAMPLES] [SAMPLE_MS] [CPU]\n", argv[0]);
    return 2;
  }
  size_t size = strtoull(argv[1], 0, 0);
  size_t stride = argc > 2 ? strtoull(argv[2], 0, 0) : 64;
  const char *pages = argc > 3 ? argv[3] : "4k";
  size_t tlb_pages = argc > 4 ? strtoull(argv[4], 0, 0) : 64;
  int samples = argc > 5 ? atoi(argv[5]) : 11;
  double sample_ms = argc > 6 ? atof(argv[6]) : 20;
  int cpu = argc > 7 ? atoi(argv[7]) : -1;
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) { perror("sched_setaffinity"); return 1; }
  }
  size_t page = 4096;
  int flags = MAP_PRIVATE | MAP_ANONYMOUS;
  if (!strcmp(pages, "2m")) { page = 2 << 20; flags |= MAP_HUGETLB | (21 << MAP_HUGE_SHIFT); }
  if (!strcmp(pages, "1g")) { page = 1 << 30; flags |= MAP_HUGETLB | (30 << MAP_HUGE_SHIFT); }
  if (!strcmp(pages, "thp")) page = 2 << 20;
  size = (size + page - 1) / page * page;
  size_t maplen = size + (!strcmp(pages, "thp") ? page : 0);
  char *raw = mmap(0, maplen, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (raw == MAP_FAILED) { perror("mmap"); return 1; }
  char *buf = (char *)(((uintptr_t)raw + page - 1) / page * page);
  if (!strcmp(pages, "thp")) madvise(buf, size, MADV_HUGEPAGE);
  if (!strcmp(pages, "4k")) madvise(buf, size, MADV_NOHUGEPAGE);
  memset(buf, 0, size);

  size_t n = size / stride;
  size_t per_group = tlb_pages * 4096 / stride; /* base pages, as multichase */
  if (per_group == 0) per_group = 1;
  size_t groups = (n + per_group - 1) / per_group;
  size_t *gorder = malloc(groups * sizeof *gorder);
  size_t *inner = malloc((per_group < n ? per_group : n) * sizeof *inner);
  for (size_t g = 0; g < groups; g++) gorder[g] = g;
  shuffle(gorder, groups);
  char *first = 0, *prev = 0;
  for (size_t gi = 0; gi < groups; gi++) {
    size_t lo = gorder[gi] * per_group, hi = lo + per_group;
    if (hi > n) hi = n;
    for (size_t e = lo; e < hi; e++) inner[e - lo] = e;
    shuffle(inner, hi - lo);
    for (size_t k = 0; k < hi - lo; k++) {
      char *cur = buf + inner[k] * stride;
      if (prev) *(void **)prev = cur; else first = cur;
      prev = cur;
    }
  }
  *(void **)prev = first;

  void *p = first;
  uint64_t warm = n < (1u << 22) ? 2 * n : (1u << 22);
  p = walk(p, warm);
  uint64_t probe = 1024;
  double t;
  for (;;) {
    double t0 = now_ns();
    p = walk(p, probe);
    t = now_ns() - t0;
    if (t > 1e6) break;
    probe *= 4;
  }
  uint64_t loads = (uint64_t)(sample_ms * 1e6 / (t / probe));
  if (loads < 100000) loads = 100000;
  double *v = malloc(samples * sizeof *v);
  for (int s = 0; s < samples; s++) {
    double t0 = now_ns();
    p = walk(p, loads);
    v[s] = (now_ns() - t0) / loads;
  }
  sink = p;
  qsort(v, samples, sizeof *v, cmp);
  double med = samples % 2 ? v[samples / 2] : (v[samples / 2 - 1] + v[samples / 2]) / 2;
  printf("median_ns=%.3f min_ns=%.3f max_ns=%.3f samples=%d loads_per_sample=%llu\n", med, v[0],
         v[samples - 1], samples, (unsigned long long)loads);
  return 0;
}
