// Host clocks of the recorder. Every host timestamp in a native trace is CLOCK_REALTIME
// in ns (the domain of Kineto's baseTimeNanoseconds + ts); CLOCK_MONOTONIC drives the
// flusher's deadlines. Both are vDSO calls (~20 ns, no system call).
#pragma once

#include <time.h>

#include <cstdint>

namespace commlens::recorder {

inline int64_t ReadClockNs(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
inline int64_t RealtimeNs() { return ReadClockNs(CLOCK_REALTIME); }
inline int64_t MonotonicNs() { return ReadClockNs(CLOCK_MONOTONIC); }

}  // namespace commlens::recorder
