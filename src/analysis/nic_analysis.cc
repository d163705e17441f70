#include "analysis/nic_analysis.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "analysis/collectives.h"

namespace commlens::analysis {

namespace {

constexpr model::TimeNs kForever = std::numeric_limits<model::TimeNs>::max();

// The part of the recording an analysis covers: everything, or [lo, hi].
struct Span {
  model::TimeNs lo = std::numeric_limits<model::TimeNs>::min();
  model::TimeNs hi = kForever;
};

Span WindowSpan(const model::RankTrace& r, const ActivityWindow& w) {
  Span s;
  if (!w.filtered || w.rows.empty()) return s;
  s.lo = kForever;
  s.hi = std::numeric_limits<model::TimeNs>::min();
  for (uint32_t row : w.rows) {
    s.lo = std::min(s.lo, r.gpu.start[row]);
    s.hi = std::max(s.hi, r.gpu.end[row]);
  }
  return s;
}

// Per host: the union of its filtered ranks' spans; hosts with none filtered are absent.
std::map<std::string, Span> HostSpans(const model::Trace& trace,
                                      const std::vector<const ActivityWindow*>& windows) {
  std::map<std::string, Span> spans;
  for (size_t i = 0; i < trace.ranks.size() && i < windows.size(); ++i) {
    if (!windows[i]->filtered || windows[i]->rows.empty()) continue;
    const model::RankTrace& r = trace.ranks[i];
    const Span s = WindowSpan(r, *windows[i]);
    auto [it, added] = spans.emplace(r.hostname, s);
    if (added) continue;
    it->second.lo = std::min(it->second.lo, s.lo);
    it->second.hi = std::max(it->second.hi, s.hi);
  }
  return spans;
}

Span SpanOf(const std::map<std::string, Span>& spans, const std::string& host) {
  auto it = spans.find(host);
  return it == spans.end() ? Span{} : it->second;
}

// "efa.tx_bytes" -> ("efa", "tx_bytes")
std::pair<std::string, std::string> SplitName(const std::string& name) {
  const size_t dot = name.find('.');
  if (dot == std::string::npos) return {"", name};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

std::string KindName(const std::string& prefix) {
  if (prefix == "efa") return "efa";
  if (prefix == "ib") return "infiniband";
  if (prefix == "roce") return "roce";
  if (prefix == "net") return "ethernet";
  return "rdma";
}

bool IsTx(const std::string& file) { return file == "tx_bytes" || file == "port_xmit_data"; }
bool IsRx(const std::string& file) { return file == "rx_bytes" || file == "port_rcv_data"; }

// Counters of errors, retransmits, drops, discards, timeouts (events, not their bytes).
bool IsErrorCounter(const std::string& file, const std::string& unit) {
  if (BaseUnitOf(unit).unit == "bytes") return false;
  for (const char* word : {"err", "retrans", "drop", "discard", "timeout", "downed"})
    if (file.find(word) != std::string::npos) return true;
  return false;
}

// What the rates of one series say inside a span.
struct Clipped {
  double amount = 0;
  double covered_s = 0;  // seconds of intervals with an amount, inside the span
  double peak = 0;       // largest interval rate among the intervals inside the span
};

Clipped Clip(const CounterRates& r, const Span& s) {
  Clipped c;
  for (size_t i = 0; i < r.size(); ++i) {
    const model::TimeNs a = std::max(r.start[i], s.lo), b = std::min(r.end[i], s.hi);
    if (b <= a) continue;
    const double share = static_cast<double>(b - a) / static_cast<double>(r.end[i] - r.start[i]);
    c.amount += r.amount[i] * share;
    c.covered_s += static_cast<double>(b - a) * 1e-9;
    c.peak = std::max(c.peak, r.rate[i]);
  }
  return c;
}

uint64_t SamplesIn(const model::CounterSeries& s, const Span& span) {
  return static_cast<uint64_t>(std::count_if(
      s.time.begin(), s.time.end(), [&](model::TimeNs t) { return t >= span.lo && t <= span.hi; }));
}

// The data counters of one port, kept for the wire-bytes pass.
struct PortRates {
  std::string host;
  bool rdma = false;
  CounterRates tx;
};

std::vector<NicPort> NicPorts(const model::Trace& trace, const std::map<std::string, Span>& spans,
                              std::vector<PortRates>* port_rates) {
  std::map<std::pair<std::string, std::string>, std::vector<const model::CounterSeries*>> by_port;
  for (const model::CounterSeries& c : trace.counters)
    if (c.owner == model::CounterOwner::kNic) by_port[{c.host, c.device}].push_back(&c);
  std::vector<NicPort> ports;
  for (const auto& [key, series] : by_port) {
    NicPort p;
    p.host = key.first;
    p.device = key.second;
    const Span span = SpanOf(spans, p.host);
    PortRates kept;
    kept.host = p.host;
    bool have_tx_samples = false;
    for (const model::CounterSeries* s : series) {
      const auto [prefix, file] = SplitName(s->name);
      p.kind = KindName(prefix);
      if (file == "link_rate") {
        for (size_t i = 0; i < s->value.size(); ++i)
          if (s->time[i] >= span.lo && s->time[i] <= span.hi)
            p.line_rate_bits_per_s = std::max(p.line_rate_bits_per_s, s->value[i]);
        if (p.line_rate_bits_per_s == 0 && !s->value.empty())
          p.line_rate_bits_per_s = *std::max_element(s->value.begin(), s->value.end());
        continue;
      }
      if (!s->cumulative) continue;
      const bool tx = IsTx(file), rx = IsRx(file);
      if (tx || rx) {
        CounterRates rates = RatesOf(*s);
        const Clipped c = Clip(rates, span);
        const double mean = c.covered_s > 0 ? c.amount / c.covered_s : 0;
        (tx ? p.tx_bytes : p.rx_bytes) += c.amount;
        (tx ? p.peak_tx_bytes_per_s : p.peak_rx_bytes_per_s) = c.peak;
        (tx ? p.mean_tx_bytes_per_s : p.mean_rx_bytes_per_s) = mean;
        p.wraps += rates.wraps;
        p.resets += rates.resets;
        p.gaps += rates.gaps;
        if (tx || !have_tx_samples) p.samples = SamplesIn(*s, span);
        have_tx_samples |= tx;
        if (tx) {
          kept.rdma = prefix != "net";
          kept.tx = std::move(rates);
        }
      } else if (IsErrorCounter(file, s->unit)) {
        p.errors += Clip(RatesOf(*s), span).amount;
      }
    }
    ports.push_back(std::move(p));
    if (!kept.tx.start.empty()) port_rates->push_back(std::move(kept));
  }
  return ports;
}

void AddGpuMetric(const model::CounterSeries& s, int rank, const std::string& host,
                  const Span& span, std::vector<GpuMetric>* out) {
  if (s.owner != model::CounterOwner::kDevice || s.cumulative) return;
  GpuMetric m;
  m.rank = rank;
  m.host = host;
  m.device = s.device;
  m.name = s.name;
  m.unit = s.unit;
  double sum = 0;
  const size_t n = std::min(s.time.size(), s.value.size());
  for (size_t i = 0; i < n; ++i) {
    if (s.time[i] < span.lo || s.time[i] > span.hi) continue;
    const double v = s.value[i];
    m.min = m.samples == 0 ? v : std::min(m.min, v);
    m.max = m.samples == 0 ? v : std::max(m.max, v);
    sum += v;
    ++m.samples;
  }
  if (m.samples == 0) return;
  m.mean = sum / static_cast<double>(m.samples);
  out->push_back(std::move(m));
}

std::vector<WireBytes> WireAgainstClaimed(const model::Trace& trace,
                                          const std::vector<std::vector<uint8_t>>& in_window,
                                          const std::vector<PortRates>& ports) {
  // The host's ports that carry collectives: RDMA ports when it has any.
  std::map<std::string, std::vector<const CounterRates*>> rdma, net;
  for (const PortRates& p : ports) (p.rdma ? rdma : net)[p.host].push_back(&p.tx);
  std::map<std::string, size_t> first_rank;  // host -> index in trace.ranks (lowest rank)
  std::map<std::string, int> ranks_on_host;
  for (size_t i = 0; i < trace.ranks.size(); ++i) {
    first_rank.emplace(trace.ranks[i].hostname, i);
    ++ranks_on_host[trace.ranks[i].hostname];
  }
  std::map<std::tuple<std::string, model::CommOp, int64_t>, WireBytes> buckets;
  for (const auto& [host, index] : first_rank) {
    const auto& host_ports = rdma.count(host) ? rdma[host] : net[host];
    if (host_ports.empty()) continue;
    const model::RankTrace& r = trace.ranks[index];
    const model::CommOps& c = r.comms;
    for (size_t i = 0; i < c.size(); ++i) {
      if (index < in_window.size() && i < in_window[index].size() && !in_window[index][i]) continue;
      if (c.end[i] <= c.start[i] || c.bytes[i] < 0) continue;
      // Only collectives inside the sampled time: outside it the NIC bytes are unknown, not 0.
      double wire = 0;
      bool covered = false;
      for (const CounterRates* tx : host_ports) {
        if (tx->start.front() > c.start[i] || tx->end.back() < c.end[i]) continue;
        covered = true;
        wire += AmountBetween(*tx, c.start[i], c.end[i]);
      }
      if (!covered) continue;
      const std::string group = c.group[i] < r.groups.size() ? r.groups[c.group[i]].name : "";
      const auto [lo, hi] = SizeBucket(c.bytes[i]);
      WireBytes& b = buckets[{group, c.op[i], lo}];
      b.group = group;
      b.op = c.op[i];
      b.size_lo = lo;
      b.size_hi = hi;
      ++b.count;
      b.claimed_bytes += static_cast<double>(c.bytes[i]) * ranks_on_host[host];
      b.wire_bytes += wire;
    }
  }
  std::vector<WireBytes> out;
  for (auto& [key, b] : buckets) out.push_back(std::move(b));
  return out;
}

}  // namespace

double AmountBetween(const CounterRates& r, model::TimeNs from, model::TimeNs to) {
  if (to <= from) return 0;
  // Intervals are in time order and do not overlap: the first that ends after |from|.
  auto it = std::upper_bound(r.end.begin(), r.end.end(), from);
  double amount = 0;
  for (size_t i = static_cast<size_t>(it - r.end.begin()); i < r.size() && r.start[i] < to; ++i) {
    const model::TimeNs a = std::max(r.start[i], from), b = std::min(r.end[i], to);
    if (b > a)
      amount +=
          r.amount[i] * static_cast<double>(b - a) / static_cast<double>(r.end[i] - r.start[i]);
  }
  return amount;
}

CounterAnalysis AnalyzeCounters(const model::Trace& trace,
                                const std::vector<const ActivityWindow*>& windows,
                                const std::vector<std::vector<uint8_t>>& in_window) {
  CounterAnalysis out;
  const std::map<std::string, Span> spans = HostSpans(trace, windows);
  std::vector<PortRates> port_rates;
  out.nics = NicPorts(trace, spans, &port_rates);
  for (size_t i = 0; i < trace.ranks.size(); ++i) {
    const model::RankTrace& r = trace.ranks[i];
    const Span span = i < windows.size() ? WindowSpan(r, *windows[i]) : Span{};
    for (const model::CounterSeries& s : r.counters)
      AddGpuMetric(s, r.rank, r.hostname, span, &out.gpu_metrics);
  }
  for (const model::CounterSeries& s : trace.counters)
    AddGpuMetric(s, -1, s.host, SpanOf(spans, s.host), &out.gpu_metrics);
  out.wire = WireAgainstClaimed(trace, in_window, port_rates);
  return out;
}

}  // namespace commlens::analysis
