// GPU stretches of ranks whose tables stayed with the processes that imported them
// (analyze --mpi, rank_summary.h). The cross-rank analyses ask in an order that does not
// depend on the answers (gpu_stretch.h), so they run twice: once over AskingStretches,
// which notes each question and answers nothing, then, once the owners have answered
// every question in one round, over AnsweredStretches, which replays the answers in the
// same order. Per rank, the questions and answers are in asking order.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/gpu_stretch.h"
#include "model/trace.h"

namespace commlens::analysis {

struct StretchQuestion {
  model::TimeNs lo = 0, hi = 0;  // on the job's clock
  uint32_t own_group = model::kNoIndex;  // a job group (Trace::groups)
  bool by_name = false;  // the caller wants compute time per kernel name
};

struct StretchAnswer {
  Stretch stretch;
  // Compute time per kernel name in the stretch, by name: what the caller's OnCompute
  // sums (integer sums, so one call per name gives the caller the same totals).
  std::vector<std::pair<std::string, model::TimeNs>> compute_by_name;
};

template <typename T>
using PerRank = std::vector<std::vector<T>>;  // by index in Trace::ranks

// The owners' answers to every rank's questions, in the same shape.
using AnswerStretches = std::function<PerRank<StretchAnswer>(const PerRank<StretchQuestion>&)>;

class AskingStretches final : public StretchSource {
 public:
  explicit AskingStretches(size_t ranks) : questions_(ranks) {}
  Stretch Measure(size_t rank, model::TimeNs lo, model::TimeNs hi, uint32_t own_group,
                  const OnCompute& on_compute = {}) override;
  const PerRank<StretchQuestion>& questions() const { return questions_; }

 private:
  PerRank<StretchQuestion> questions_;
};

class AnsweredStretches final : public StretchSource {
 public:
  AnsweredStretches(PerRank<StretchQuestion> questions, PerRank<StretchAnswer> answers);
  // Aborts when asked anything but the next question of the rank: the analyses' order of
  // asking must not depend on the answers.
  Stretch Measure(size_t rank, model::TimeNs lo, model::TimeNs hi, uint32_t own_group,
                  const OnCompute& on_compute = {}) override;

 private:
  PerRank<StretchQuestion> questions_;
  PerRank<StretchAnswer> answers_;
  std::vector<size_t> next_;
};

// The answers for one rank whose GPU table is here: |rank| as imported, on its own clock;
// |offset| (model::ClockOffset::offset) takes a job time to it, |job_group_of| maps each
// of its groups (RankTrace::groups) to the job's and is written into them.
std::vector<StretchAnswer> AnswerFromTable(model::RankTrace* rank, model::TimeNs offset,
                                           const std::vector<uint32_t>& job_group_of,
                                           const std::vector<StretchQuestion>& questions);

}  // namespace commlens::analysis
