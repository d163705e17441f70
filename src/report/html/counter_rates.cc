#include "report/html/counter_rates.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace commlens::report::html {

namespace {

using model::CounterSeries;
using model::TimeNs;

struct Source {
  const CounterSeries* series;
  std::string label;
};

// Bytes per unit of an amount series, or 0 when the unit is not an amount.
double BytesPerUnit(const std::string& unit) {
  if (unit == "bytes" || unit == "B") return 1.0;
  if (unit == "4 bytes") return 4.0;
  return 0.0;
}
bool IsPackets(const std::string& unit) { return unit == "packets"; }

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
    const double bytes_per_unit = BytesPerUnit(unit);
    const bool rate = bytes_per_unit > 0 || IsPackets(unit) || sources.front().series->cumulative;
    TimeNs lo = INT64_MAX, hi = INT64_MIN;
    for (const Source& src : sources) {
      lo = std::min(lo, src.series->time.front());
      hi = std::max(hi, src.series->time.back());
    }
    CounterChart c;
    c.name = std::get<0>(key);
    c.rate = rate;
    c.unit = !rate ? unit : bytes_per_unit > 0 ? "GB/s" : IsPackets(unit) ? "packets/s" : unit + "/s";
    const double scale = bytes_per_unit > 0 ? bytes_per_unit * 1e-9 : 1.0;  // bytes -> GB
    c.start = lo;
    c.bin = std::max<TimeNs>(1, (hi - lo) / static_cast<TimeNs>(bins) + 1);
    const bool aggregate = sources.size() > max_series;
    const size_t drawn = aggregate ? 1 : sources.size();
    std::vector<std::vector<double>> sum(drawn, std::vector<double>(bins, 0.0));
    std::vector<std::vector<uint32_t>> n(drawn, std::vector<uint32_t>(bins, 0));
    for (size_t k = 0; k < sources.size(); ++k) {
      const CounterSeries& s = *sources[k].series;
      const size_t out = aggregate ? 0 : k;
      for (size_t i = 0; i < s.time.size(); ++i) {
        double v = s.value[i];
        if (rate && s.cumulative) {
          if (i == 0) continue;
          v = s.value[i] - s.value[i - 1];
          if (v < 0) continue;  // counter reset
        }
        const auto b = static_cast<size_t>((s.time[i] - lo) / c.bin);
        sum[out][std::min(b, bins - 1)] += v;
        n[out][std::min(b, bins - 1)] += 1;
      }
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
