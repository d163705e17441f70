// Runs |body(i)| for every i in [0, n) on up to |threads| threads (0: one per hardware
// thread). Items are handed out one at a time, so uneven items (ranks of different
// sizes) balance; the calling thread works too. |body| must be safe to call concurrently
// for different i.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace commlens {

template <typename Body>
void ParallelFor(size_t n, int threads, Body&& body) {
  size_t workers = threads > 0 ? static_cast<size_t>(threads)
                               : std::max(1u, std::thread::hardware_concurrency());
  workers = std::min(workers, n);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) body(i);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

}  // namespace commlens
