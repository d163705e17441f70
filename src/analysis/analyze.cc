#include "analysis/analyze.h"

#include "common/parallel_for.h"

namespace commlens::analysis {

RankAnalysis AnalyzeRank(const model::RankTrace& r, const AnalyzeOptions& options) {
  RankAnalysis a;
  a.trace = &r;
  a.window = SelectActivities(r, options.window);
  a.time = ComputeRankTimeBreakdown(r, a.window);
  a.kernels = ComputeKernelBreakdown(r, a.window.rows, options.top_kernels);
  a.idle = ComputeIdleGaps(r, a.window.rows, options.idle);
  a.ops_in_window = OpsInWindow(r, a.window);
  return a;
}

JobAnalysis Analyze(const model::Trace& trace, const AnalyzeOptions& options) {
  std::vector<RankAnalysis> ranks(trace.ranks.size());
  ParallelFor(trace.ranks.size(), options.threads, [&](size_t i) { ranks[i] = AnalyzeRank(trace.ranks[i], options); });
  return AnalyzeJob(trace, std::move(ranks), options);
}

JobAnalysis AnalyzeJob(const model::Trace& trace, std::vector<RankAnalysis> ranks, const AnalyzeOptions& options,
                       const AnswerStretches* answer) {
  JobAnalysis job;
  job.ranks = std::move(ranks);
  std::vector<const ActivityWindow*> windows;
  std::vector<const RankTimeBreakdown*> times;
  std::vector<const KernelBreakdown*> kernels;
  std::vector<std::vector<uint8_t>> in_window;
  for (size_t i = 0; i < job.ranks.size(); ++i) {
    RankAnalysis& a = job.ranks[i];
    a.trace = &trace.ranks[i];
    windows.push_back(&a.window);
    times.push_back(&a.time);
    kernels.push_back(&a.kernels);
    in_window.push_back(a.ops_in_window);
  }
  job.steps = MeanStepBreakdowns(times);
  const StepNoise noise = MeasureStepNoise(job.steps, times);
  job.kernels = MergeKernelBreakdowns(kernels, options.top_kernels);
  const Arrivals arrivals = ComputeArrivals(trace, in_window);
  job.bench = options.bench;
  job.collectives = AnalyzeCollectives(trace, in_window, arrivals, options.bench);
  if (answer == nullptr) {
    TraceStretches gpu(trace);
    job.cross_rank = AnalyzeCrossRank(trace, in_window, arrivals, times, noise, job.collectives, gpu, options.doing_at);
  } else {
    // Twice: the first run only gathers the questions (and asks nothing of the hangs).
    AskingStretches asking(trace.ranks.size());
    AnalyzeCrossRank(trace, in_window, arrivals, times, noise, job.collectives, asking);
    PerRank<StretchQuestion> questions = asking.questions();
    PerRank<StretchAnswer> answers = (*answer)(questions);
    AnsweredStretches answered(std::move(questions), std::move(answers));
    job.cross_rank = AnalyzeCrossRank(trace, in_window, arrivals, times, noise, job.collectives, answered, options.doing_at);
  }
  job.counters = AnalyzeCounters(trace, windows, in_window);
  job.findings = FindFindings(trace, job);
  return job;
}

}  // namespace commlens::analysis
