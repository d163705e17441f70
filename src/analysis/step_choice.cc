#include "analysis/step_choice.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "common/strings.h"

namespace commlens::analysis {

namespace {

constexpr double kWarmup = 1.5;   // a leading step this many times the median is warm-up
constexpr double kOutlier = 3.0;  // any other step this many times the median is an outlier
constexpr size_t kMinSteps = 3;   // fewer steps have no median to speak of

model::TimeNs Median(std::vector<model::TimeNs> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

std::vector<int64_t> StepChoice::Summarized() const {
  std::vector<int64_t> out;
  for (const Step& s : steps)
    if (s.left_out.empty()) out.push_back(s.number);
  return out;
}

std::vector<int64_t> StepChoice::Windowed() const {
  std::vector<int64_t> out;
  for (const Step& s : steps)
    if (!s.cut) out.push_back(s.number);
  return out;
}

bool StepChoice::CutsWindow() const {
  return std::any_of(steps.begin(), steps.end(), [](const Step& s) { return s.cut; });
}

bool StepChoice::LeavesOut() const {
  return std::any_of(steps.begin(), steps.end(), [](const Step& s) { return !s.left_out.empty(); });
}

Result<StepChoice> ChooseSteps(const model::Trace& trace, const std::vector<int64_t>& requested) {
  std::vector<const std::vector<model::ProfilerStep>*> per_rank;
  for (const model::RankTrace& r : trace.ranks) per_rank.push_back(&r.steps);
  return ChooseSteps(per_rank, requested);
}

Result<StepChoice> ChooseSteps(const std::vector<const std::vector<model::ProfilerStep>*>& per_rank,
                               const std::vector<int64_t>& requested) {
  std::map<int64_t, std::vector<model::TimeNs>> lengths;
  for (const std::vector<model::ProfilerStep>* steps : per_rank)
    for (const model::ProfilerStep& s : *steps) lengths[s.number].push_back(s.end - s.start);
  StepChoice c;
  for (auto& [number, l] : lengths) c.steps.push_back({number, Median(std::move(l)), ""});
  if (!requested.empty()) {
    c.selected_by_user = true;
    std::vector<int64_t> have;
    for (const auto& s : c.steps) have.push_back(s.number);
    for (int64_t want : requested)
      if (!std::binary_search(have.begin(), have.end(), want))
        return Error("--steps: the traces have no step " + std::to_string(want) + "; " +
                     (have.empty() ? std::string("they have no profiler steps at all")
                                   : "they have step" + std::string(have.size() == 1 ? " " : "s ") + StepList(have)));
    for (auto& s : c.steps)
      if (std::find(requested.begin(), requested.end(), s.number) == requested.end()) {
        s.left_out = "not selected";
        s.cut = true;
      }
    return c;
  }
  if (c.steps.size() < kMinSteps) return c;
  std::vector<model::TimeNs> all;
  for (const auto& s : c.steps) all.push_back(s.length);
  const double m = static_cast<double>(Median(all));
  bool leading = true;
  for (auto& s : c.steps) {
    const double l = static_cast<double>(s.length);
    if (leading && l > kWarmup * m) {
      s.left_out = "warm-up";
      s.cut = true;
      continue;
    }
    leading = false;
    if (l > kOutlier * m) s.left_out = "outlier";
  }
  return c;
}

std::string StepList(const std::vector<int64_t>& sorted) { return NumberRanges(sorted); }

Result<std::vector<int64_t>> ParseStepList(const std::string& text) {
  std::vector<int64_t> steps;
  auto number = [](std::string_view s, int64_t* v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
    return ec == std::errc() && p == s.data() + s.size() && *v >= 0;
  };
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view part = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    size_t dash = part.find('-');
    int64_t lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      if (!number(part, &lo)) return Error("--steps: '" + std::string(part) + "' is not a step number");
      hi = lo;
    } else if (!number(part.substr(0, dash), &lo) || !number(part.substr(dash + 1), &hi) || hi < lo) {
      return Error("--steps: '" + std::string(part) + "' is not a range A-B with A <= B");
    }
    if (hi - lo > 1'000'000) return Error("--steps: the range '" + std::string(part) + "' is too large");
    for (int64_t s = lo; s <= hi; ++s) steps.push_back(s);
  }
  if (steps.empty()) return Error("--steps: no step numbers given");
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  return steps;
}

}  // namespace commlens::analysis
