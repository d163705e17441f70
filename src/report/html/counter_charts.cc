#include "report/html/counter_charts.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "model/counter_rates.h"

namespace commlens::report::html {

namespace {

using model::CounterSeries;
using model::TimeNs;

struct Source {
  const CounterSeries* series;
  std::string label;
};

bool IsBytes(const std::string& unit) { return model::BaseUnitOf(unit).unit == "bytes"; }
bool IsPackets(const std::string& unit) { return model::BaseUnitOf(unit).unit == "packets"; }

std::string Label(const CounterSeries& s, const std::string& rank_label) {
  std::string l = rank_label;
  auto add = [&](const std::string& part) {
    if (part.empty()) return;
    if (!l.empty()) l += " ";
    l += part;
  };
  if (rank_label.empty()) add(s.host);
  if (s.owner == model::CounterOwner::kDevice) add("GPU " + s.device);
  if (s.owner == model::CounterOwner::kNic) add(s.device);
  return l.empty() ? s.name : l;
}

}  // namespace

std::vector<CounterChart> ResampleCounters(const model::Trace& trace, size_t bins, size_t max_series) {
  std::map<std::tuple<std::string, std::string, int>, std::vector<Source>> groups;
  auto collect = [&](const CounterSeries& s, const std::string& rank_label) {
    if (s.time.size() < 1 || s.time.size() != s.value.size()) return;
    groups[{s.name, s.unit, static_cast<int>(s.owner)}].push_back({&s, Label(s, rank_label)});
  };
  for (const auto& r : trace.ranks)
    for (const auto& s : r.counters) collect(s, "rank " + std::to_string(r.rank));
  for (const auto& s : trace.counters) collect(s, "");

  std::vector<CounterChart> charts;
  bins = std::max<size_t>(bins, 1);
  for (const auto& [key, sources] : groups) {
    const std::string& unit = std::get<1>(key);
    const bool bytes = IsBytes(unit);
    const bool rate = bytes || IsPackets(unit) || sources.front().series->cumulative;
    TimeNs lo = INT64_MAX, hi = INT64_MIN;
    for (const Source& src : sources) {
      lo = std::min(lo, src.series->time.front());
      hi = std::max(hi, src.series->time.back());
    }
    CounterChart c;
    c.name = std::get<0>(key);
    c.rate = rate;
    c.unit = !rate ? unit : bytes ? "GB/s" : IsPackets(unit) ? "packets/s" : unit + "/s";
    const double scale = bytes ? 1e-9 : 1.0;  // bytes -> GB
    c.start = lo;
    c.bin = std::max<TimeNs>(1, (hi - lo) / static_cast<TimeNs>(bins) + 1);
    const bool aggregate = sources.size() > max_series;
    const size_t drawn = aggregate ? 1 : sources.size();
    std::vector<std::vector<double>> sum(drawn, std::vector<double>(bins, 0.0));
    std::vector<std::vector<uint32_t>> n(drawn, std::vector<uint32_t>(bins, 0));
    for (size_t k = 0; k < sources.size(); ++k) {
      const CounterSeries& s = *sources[k].series;
      const size_t out = aggregate ? 0 : k;
      auto add = [&](TimeNs t, double v) {
        const auto b = std::min(static_cast<size_t>((t - lo) / c.bin), bins - 1);
        sum[out][b] += v;
        n[out][b] += 1;
      };
      if (s.cumulative) {
        // Amounts between samples in base units: wraps, resets, gaps and saturated
        // counters handled once, in model/counter_rates.
        const model::CounterRates r = model::RatesOf(s);
        for (size_t i = 0; i < r.size(); ++i) add(r.end[i], r.amount[i]);
        continue;
      }
      const double factor = rate ? model::BaseUnitOf(s.unit).factor : 1.0;  // amounts per sample
      for (size_t i = 0; i < s.time.size(); ++i) add(s.time[i], s.value[i] * factor);
    }
    for (size_t k = 0; k < drawn; ++k) {
      std::vector<std::optional<double>> values(bins);
      for (size_t b = 0; b < bins; ++b) {
        if (rate) {
          values[b] = sum[k][b] * scale / (static_cast<double>(c.bin) * 1e-9);
        } else if (n[k][b] > 0) {
          values[b] = sum[k][b] / n[k][b];  // an aggregate: the mean of every sample in the bin
        }
      }
      c.values.push_back(std::move(values));
      c.labels.push_back(aggregate ? (rate ? "sum of " : "mean of ") + std::to_string(sources.size()) + " series"
                                   : sources[k].label);
    }
    charts.push_back(std::move(c));
  }
  return charts;
}

}  // namespace commlens::report::html
