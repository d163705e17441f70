#include "analysis/stretch_questions.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string_view>

namespace commlens::analysis {

Stretch AskingStretches::Measure(size_t rank, model::TimeNs lo, model::TimeNs hi, uint32_t own_group,
                                 const OnCompute& on_compute) {
  if (hi > lo) questions_[rank].push_back({lo, hi, own_group, static_cast<bool>(on_compute)});
  return {};
}

AnsweredStretches::AnsweredStretches(PerRank<StretchQuestion> questions, PerRank<StretchAnswer> answers)
    : questions_(std::move(questions)), answers_(std::move(answers)), next_(questions_.size(), 0) {}

Stretch AnsweredStretches::Measure(size_t rank, model::TimeNs lo, model::TimeNs hi, uint32_t own_group,
                                   const OnCompute& on_compute) {
  if (hi <= lo) return {};
  const size_t k = next_[rank]++;
  if (k >= questions_[rank].size() || k >= answers_[rank].size() || questions_[rank][k].lo != lo ||
      questions_[rank][k].hi != hi || questions_[rank][k].own_group != own_group) {
    std::fprintf(stderr, "commlens: internal: GPU stretch question %zu of rank index %zu asked out of order\n", k,
                 rank);
    std::abort();
  }
  const StretchAnswer& a = answers_[rank][k];
  if (on_compute)
    for (const auto& [name, time] : a.compute_by_name) on_compute(name, time);
  return a.stretch;
}

std::vector<StretchAnswer> AnswerFromTable(model::RankTrace* rank, model::TimeNs offset,
                                           const std::vector<uint32_t>& job_group_of,
                                           const std::vector<StretchQuestion>& questions) {
  // GpuStretches tells other groups' communication apart by the groups' job groups.
  for (size_t g = 0; g < rank->groups.size(); ++g)
    rank->groups[g].job_group = g < job_group_of.size() ? job_group_of[g] : model::kNoIndex;
  GpuStretches gpu(*rank);
  std::vector<StretchAnswer> out(questions.size());
  std::map<std::string_view, model::TimeNs> names;
  for (size_t i = 0; i < questions.size(); ++i) {
    const StretchQuestion& q = questions[i];
    names.clear();
    OnCompute by_name;
    if (q.by_name) by_name = [&](std::string_view n, model::TimeNs t) { names[n] += t; };
    out[i].stretch = gpu.Measure(q.lo + offset, q.hi + offset, q.own_group, by_name);
    for (const auto& [n, t] : names) out[i].compute_by_name.emplace_back(std::string(n), t);
  }
  return out;
}

}  // namespace commlens::analysis
