#include "analysis/analyze.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace commlens::analysis {

JobAnalysis Analyze(const model::Trace& trace, const AnalyzeOptions& options) {
  JobAnalysis job;
  job.ranks.resize(trace.ranks.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < trace.ranks.size(); i = next++) {
      const model::RankTrace& r = trace.ranks[i];
      RankAnalysis& a = job.ranks[i];
      a.trace = &r;
      a.window = SelectActivities(r, options.window);
      a.time = ComputeRankTimeBreakdown(r, a.window);
      a.kernels = ComputeKernelBreakdown(r, a.window.rows, options.top_kernels);
      a.idle = ComputeIdleGaps(r, a.window.rows, options.idle);
    }
  };
  size_t threads = options.threads > 0 ? static_cast<size_t>(options.threads)
                                       : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, trace.ranks.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();

  std::vector<const ActivityWindow*> windows;
  windows.reserve(job.ranks.size());
  for (const RankAnalysis& a : job.ranks) windows.push_back(&a.window);
  job.collectives = AnalyzeCollectives(trace, windows);
  return job;
}

}  // namespace commlens::analysis
