// The CPU a thread pays to be woken every PERIOD_US microseconds, reading nothing: the
// floor under a sleeping sampler (benchmarks/recorder/wakeup_floor_benchmark.cc measures
// the same with Google Benchmark; this copy needs only a C compiler, for the GPU machine).
//   cc -O2 scripts/device/wakeup_floor.c -o wakeup_floor && ./wakeup_floor 1000 5000
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double Nanos(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: wakeup_floor PERIOD_US WAKEUPS\n");
    return 64;
  }
  const long period_ns = atol(argv[1]) * 1000;
  const int wakeups = atoi(argv[2]);
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  const double cpu0 = Nanos(CLOCK_THREAD_CPUTIME_ID);
  for (int i = 0; i < wakeups; ++i) {
    next.tv_nsec += period_ns;
    while (next.tv_nsec >= 1000000000) {
      next.tv_nsec -= 1000000000;
      ++next.tv_sec;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
  }
  const double per_wakeup_us = (Nanos(CLOCK_THREAD_CPUTIME_ID) - cpu0) / 1e3 / wakeups;
  printf("period %ld us: %.2f us of CPU per wake-up, %.2f %% of a core\n", period_ns / 1000, per_wakeup_us,
         100.0 * per_wakeup_us * 1000.0 / (double)period_ns);
  return 0;
}
