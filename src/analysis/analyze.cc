#include "analysis/analyze.h"

#include "common/parallel_for.h"

namespace commlens::analysis {

JobAnalysis Analyze(const model::Trace& trace, const AnalyzeOptions& options) {
  JobAnalysis job;
  job.ranks.resize(trace.ranks.size());
  ParallelFor(trace.ranks.size(), options.threads, [&](size_t i) {
    const model::RankTrace& r = trace.ranks[i];
    RankAnalysis& a = job.ranks[i];
    a.trace = &r;
    a.window = SelectActivities(r, options.window);
    a.time = ComputeRankTimeBreakdown(r, a.window);
    a.kernels = ComputeKernelBreakdown(r, a.window.rows, options.top_kernels);
    a.idle = ComputeIdleGaps(r, a.window.rows, options.idle);
  });

  std::vector<const ActivityWindow*> windows;
  std::vector<const RankTimeBreakdown*> times;
  std::vector<const KernelBreakdown*> kernels;
  for (const RankAnalysis& a : job.ranks) {
    windows.push_back(&a.window);
    times.push_back(&a.time);
    kernels.push_back(&a.kernels);
  }
  job.steps = MeanStepBreakdowns(times);
  job.kernels = MergeKernelBreakdowns(kernels, options.top_kernels);
  std::vector<std::vector<uint8_t>> in_window(trace.ranks.size());
  ParallelFor(trace.ranks.size(), options.threads,
              [&](size_t r) { in_window[r] = OpsInWindow(trace.ranks[r], job.ranks[r].window); });
  job.collectives = AnalyzeCollectives(trace, in_window);
  job.cross_rank = AnalyzeCrossRank(trace, in_window, times, job.collectives, options.doing_at);
  job.counters = AnalyzeCounters(trace, windows, in_window);
  return job;
}

}  // namespace commlens::analysis
