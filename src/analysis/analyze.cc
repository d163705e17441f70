#include "analysis/analyze.h"

#include <algorithm>

#include "analysis/whatif.h"
#include "common/parallel_for.h"

namespace commlens::analysis {

WindowOptions WindowFor(const AnalyzeOptions& options) {
  WindowOptions w = options.window;
  if (!w.all_events && options.steps && options.steps->CutsWindow()) {
    w.cut_to_steps = true;
    w.steps = options.steps->Windowed();
  }
  return w;
}

std::vector<const JobStepBreakdown*> JobAnalysis::SummarizedSteps() const {
  std::vector<const JobStepBreakdown*> out;
  for (const JobStepBreakdown& s : steps)
    if (s.left_out.empty()) out.push_back(&s);
  return out;
}

RankAnalysis AnalyzeRank(const model::RankTrace& r, const AnalyzeOptions& options) {
  RankAnalysis a;
  a.trace = &r;
  a.window = SelectActivities(r, WindowFor(options));
  const std::vector<std::vector<uint32_t>> per_step = RowsPerStep(r);  // one pass for both
  a.time = ComputeRankTimeBreakdown(r, a.window, per_step);
  a.kernels = ComputeKernelBreakdown(r, a.window.rows, options.top_kernels);
  a.idle = ComputeIdleGaps(r, a.window.rows, options.idle);
  a.ops_in_window = OpsInWindow(r, a.window);
  a.group_comm = ComputeGroupComm(r, a.window, per_step);
  return a;
}

JobAnalysis Analyze(const model::Trace& trace, const AnalyzeOptions& options) {
  AnalyzeOptions o = options;
  if (!o.steps) o.steps = ChooseSteps(trace).value();  // the rule alone cannot fail
  std::vector<RankAnalysis> ranks(trace.ranks.size());
  ParallelFor(trace.ranks.size(), o.threads, [&](size_t i) { ranks[i] = AnalyzeRank(trace.ranks[i], o); });
  return AnalyzeJob(trace, std::move(ranks), o);
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
  // Which steps the summary covers: all of them with --all-events.
  if (options.steps && !options.window.all_events) job.step_choice = *options.steps;
  for (JobStepBreakdown& s : job.steps)
    for (const StepChoice::Step& c : job.step_choice.steps)
      if (c.number == s.number) s.left_out = c.left_out;
  std::vector<JobStepBreakdown> summarized;
  std::vector<const TimeBreakdown*> summary_parts;
  for (const JobStepBreakdown* s : job.SummarizedSteps()) {
    summarized.push_back(*s);
    summary_parts.push_back(&s->mean);
  }
  const bool over_steps = !summary_parts.empty();
  if (!over_steps)
    for (const RankAnalysis& a : job.ranks) summary_parts.push_back(&a.time.total);
  job.summary = SummarizeSteps(summary_parts, over_steps);
  job.median_span_step = MedianSpanStep(job.steps);
  const StepNoise noise = MeasureStepNoise(summarized, times);
  job.kernels = MergeKernelBreakdowns(kernels, options.top_kernels);
  std::vector<std::pair<int, const std::vector<StreamIdle>*>> idle;
  for (const RankAnalysis& a : job.ranks) {
    job.span_rank_time += a.time.total.span;
    if (a.time.total.span > 0)
      job.first_gpu_start = std::min(job.first_gpu_start.value_or(a.time.total.first_start), a.time.total.first_start);
    idle.emplace_back(a.trace->rank, &a.idle);
  }
  job.idle = SumIdleGaps(idle, options.idle.longest);
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
  {
    std::vector<const std::vector<GroupComm>*> group_comm;
    for (const RankAnalysis& a : job.ranks) group_comm.push_back(&a.group_comm);
    std::vector<int64_t> numbers;
    for (const JobStepBreakdown& s : summarized) numbers.push_back(s.number);
    const model::TimeNs window_span =
        job.ranks.empty() ? 0 : job.span_rank_time / static_cast<model::TimeNs>(job.ranks.size());
    job.roles = FindParallelRoles(trace, group_comm, job.steps, numbers, window_span);
  }
  // The what-if replay behind the verdict (whatif.h): one process, which holds every rank's
  // GPU table (under --mpi, |answer|, the tables stay with the processes).
  if (options.replay && !answer && trace.ranks.size() > 1 && trace.ranks.size() <= kReplayMaxRanks)
    job.replay = ReplayVerdictOf(trace, job);
  job.findings = FindFindings(trace, job);
  return job;
}

}  // namespace commlens::analysis
