#include "analysis/nic_analysis.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <tuple>

#include "analysis/collectives.h"

namespace commlens::analysis {

using model::BaseUnitOf;
using model::CounterRates;
using model::RatesOf;

namespace {

constexpr model::TimeNs kForever = std::numeric_limits<model::TimeNs>::max();

// The part of the recording an analysis covers: everything, or [lo, hi].
struct Span {
  model::TimeNs lo = std::numeric_limits<model::TimeNs>::min();
  model::TimeNs hi = kForever;
};

Span WindowSpan(const ActivityWindow& w) {
  if (!w.filtered || w.selected == 0) return Span{};
  return Span{w.first_start, w.last_end};
}

// Per host: the union of its filtered ranks' spans; hosts with none filtered are absent.
std::map<std::string, Span> HostSpans(const model::Trace& trace,
                                      const std::vector<const ActivityWindow*>& windows) {
  std::map<std::string, Span> spans;
  for (size_t i = 0; i < trace.ranks.size() && i < windows.size(); ++i) {
    if (!windows[i]->filtered || windows[i]->selected == 0) continue;
    const model::RankTrace& r = trace.ranks[i];
    const Span s = WindowSpan(*windows[i]);
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
bool IsTxPackets(const std::string& file) {
  return file == "tx_pkts" || file == "port_xmit_packets" || file == "tx_packets";
}

// Counters of errors, retransmits, drops, discards, timeouts, link downs, peers that
// stopped answering or were rate-limited (EFA), and packets lost on the way (mlx5
// out_of_sequence, duplicate_request): events, not their bytes. Congestion counters
// (port_xmit_wait, ECN marks, CNPs) are not errors.
bool IsErrorCounter(const std::string& file, const std::string& unit) {
  if (BaseUnitOf(unit).unit == "bytes") return false;
  for (const char* word : {"err", "retrans", "retry", "drop", "discard", "timeout", "downed", "impaired",
                           "unresponsive", "out_of_sequence", "out_of_buffer", "duplicate_request"})
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

// An error counter's growth inside a span: events, so an interval that overlaps the span
// counts whole (the increase may have come anywhere in it).
NicCounterGrowth Grown(const CounterRates& r, const Span& s) {
  NicCounterGrowth g;
  for (size_t i = 0; i < r.size(); ++i) {
    if (std::min(r.end[i], s.hi) <= std::max(r.start[i], s.lo) || r.amount[i] <= 0) continue;
    if (g.amount == 0) {
      g.first_from = r.start[i];
      g.first_to = r.end[i];
    }
    g.amount += r.amount[i];
  }
  g.lower_bound = r.stuck > 0;
  return g;
}

uint64_t SamplesIn(const model::CounterSeries& s, const Span& span) {
  return static_cast<uint64_t>(std::count_if(
      s.time.begin(), s.time.end(), [&](model::TimeNs t) { return t >= span.lo && t <= span.hi; }));
}

// The data counters of one port, kept for the wire-bytes pass.
struct PortRates {
  std::string host;
  bool rdma = false;
  double line_rate_bits_per_s = 0;  // 0: unknown
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
      } else if (IsTxPackets(file)) {
        p.tx_packets += Clip(RatesOf(*s), span).amount;
      } else if (IsErrorCounter(file, s->unit)) {
        NicCounterGrowth g = Grown(RatesOf(*s), span);
        if (g.amount <= 0) continue;
        g.name = file;
        p.errors += g.amount;
        p.error_counters.push_back(std::move(g));
      }
    }
    std::sort(p.error_counters.begin(), p.error_counters.end(),
              [](const NicCounterGrowth& a, const NicCounterGrowth& b) { return a.name < b.name; });
    kept.line_rate_bits_per_s = p.line_rate_bits_per_s;
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
  std::map<std::string, std::vector<const PortRates*>> rdma, net;
  for (const PortRates& p : ports) (p.rdma ? rdma : net)[p.host].push_back(&p);
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
      double wire = 0, line_bits_per_s = 0;
      bool covered = false, line_known = true;
      for (const PortRates* port : host_ports) {
        const CounterRates& tx = port->tx;
        if (tx.start.front() > c.start[i] || tx.end.back() < c.end[i]) continue;
        covered = true;
        wire += AmountBetween(tx, c.start[i], c.end[i]);
        line_bits_per_s += port->line_rate_bits_per_s;
        line_known &= port->line_rate_bits_per_s > 0;
      }
      if (!covered) continue;
      const std::string group = c.group[i] < r.groups.size() ? r.groups[c.group[i]].name : "";
      const auto [lo, hi] = SizeBucket(c.bytes[i]);
      WireBytes& b = buckets[{group, c.op[i], lo}];
      const bool first = b.count == 0;
      b.group = group;
      b.op = c.op[i];
      b.size_lo = lo;
      b.size_hi = hi;
      ++b.count;
      b.claimed_bytes += static_cast<double>(c.bytes[i]) * ranks_on_host[host];
      b.wire_bytes += wire;
      // One collective whose ports' line rate is unknown makes the bucket's unknown.
      const model::TimeNs duration = c.end[i] - c.start[i];
      const bool line_was_known = first || b.line_bytes > 0;
      b.collective_ns += duration;
      b.line_bytes = line_known && line_was_known
                         ? b.line_bytes + static_cast<double>(duration) * 1e-9 * line_bits_per_s / 8
                         : 0;
    }
  }
  std::vector<WireBytes> out;
  for (auto& [key, b] : buckets) out.push_back(std::move(b));
  return out;
}

// ---- Findings: ports whose error, retransmit or drop counters grew -----------------------

enum class Trouble { kLink, kRetransmit, kDrop, kError };

struct CounterWords {
  const char* counter;
  const char* words;
  Trouble trouble;
};

// Plain words for the counters of sysfs that engineers meet most (EFA hw_counters, the
// InfiniBand PMA, mlx5 hw_counters, /sys/class/net statistics).
constexpr CounterWords kCounterWords[] = {
    {"link_downed", "the link went down", Trouble::kLink},
    {"link_error_recovery", "the link retrained after errors", Trouble::kLink},
    {"symbol_error", "bit errors on the wire", Trouble::kLink},
    {"local_link_integrity_errors", "link integrity errors", Trouble::kLink},
    {"port_rcv_errors", "malformed packets received", Trouble::kError},
    {"port_rcv_remote_physical_errors", "packets that arrived marked bad upstream", Trouble::kLink},
    {"port_rcv_switch_relay_errors", "packets the switch could not relay", Trouble::kDrop},
    {"port_xmit_discards", "packets discarded on send", Trouble::kDrop},
    {"excessive_buffer_overrun_errors", "receive buffer overruns", Trouble::kDrop},
    {"VL15_dropped", "management packets dropped", Trouble::kDrop},
    {"rx_errors", "receive errors", Trouble::kError},
    {"tx_errors", "send errors", Trouble::kError},
    {"rx_dropped", "received packets dropped", Trouble::kDrop},
    {"tx_dropped", "packets dropped on send", Trouble::kDrop},
    {"rx_drops", "received packets dropped", Trouble::kDrop},
    {"retrans_pkts", "packets resent", Trouble::kRetransmit},
    {"retrans_timeout_events", "resend timeouts: the traffic moved to another path", Trouble::kRetransmit},
    {"unresponsive_remote_events", "times a peer stopped answering", Trouble::kRetransmit},
    {"impaired_remote_conn_events", "connections to a peer slowed to a reduced rate", Trouble::kRetransmit},
    {"rdma_read_wr_err", "RDMA reads that failed", Trouble::kError},
    {"rdma_write_wr_err", "RDMA writes that failed", Trouble::kError},
    {"rnr_nak_retry_err", "sends that ran out of retries: the receiver had no buffer posted", Trouble::kRetransmit},
    {"local_ack_timeout_err", "sends that ran out of retries waiting for an ack", Trouble::kRetransmit},
    {"packet_seq_err", "packet sequence errors", Trouble::kRetransmit},
    {"out_of_sequence", "packets received out of order: some were lost on the way", Trouble::kRetransmit},
    {"duplicate_request", "duplicate requests: the peer resent", Trouble::kRetransmit},
    {"roce_adp_retrans", "adaptive resends", Trouble::kRetransmit},
    {"out_of_buffer", "packets dropped: no receive buffer posted", Trouble::kDrop},
};

const CounterWords* WordsFor(const std::string& counter) {
  for (const CounterWords& w : kCounterWords)
    if (counter == w.counter) return &w;
  return nullptr;
}

Trouble TroubleOf(const std::string& counter) {
  if (const CounterWords* w = WordsFor(counter)) return w->trouble;
  for (const char* word : {"retrans", "retry", "duplicate", "out_of_sequence"})
    if (counter.find(word) != std::string::npos) return Trouble::kRetransmit;
  for (const char* word : {"drop", "discard", "out_of_buffer"})
    if (counter.find(word) != std::string::npos) return Trouble::kDrop;
  for (const char* word : {"downed", "link", "symbol"})
    if (counter.find(word) != std::string::npos) return Trouble::kLink;
  return Trouble::kError;
}

std::string Printf(const char* format, double a, double b = 0) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), format, a, b);
  return buf;
}

std::string KindLabel(const std::string& kind) {
  if (kind == "efa") return "EFA";
  if (kind == "infiniband") return "InfiniBand";
  if (kind == "roce") return "RoCE";
  if (kind == "ethernet") return "Ethernet";
  return "RDMA";
}

// "retrans_pkts +12 (packets resent, 0.02% of the 60000 sent)"
std::string CounterPhrase(const NicCounterGrowth& g, const NicPort& p) {
  std::string s = g.name + Printf(" +%.0f", g.amount) + (g.lower_bound ? " or more" : "");
  std::string words;
  if (const CounterWords* w = WordsFor(g.name)) words = w->words;
  if (g.name == "retrans_pkts" && p.tx_packets > 0)
    words += Printf(", %.2g%% of the %.0f sent", 100.0 * g.amount / p.tx_packets, p.tx_packets);
  if (g.lower_bound) words += std::string(words.empty() ? "" : "; ") + "the counter saturated";
  return words.empty() ? s : s + " (" + words + ")";
}

// What the worst kind of trouble means, for someone who has not met these counters.
std::string Hint(const NicPort& p) {
  bool link = false, retransmit = false, drop = false;
  for (const NicCounterGrowth& g : p.error_counters) {
    const Trouble t = TroubleOf(g.name);
    link |= t == Trouble::kLink;
    retransmit |= t == Trouble::kRetransmit;
    drop |= t == Trouble::kDrop;
  }
  if (link)
    return " Link downs, retraining and bit errors point at the physical link: the cable, the transceiver "
           "or the switch port.";
  if (retransmit && p.kind == "efa")
    return " EFA resends lost packets itself (its SRD protocol), so the job went on; each resend means a "
           "packet was lost or dropped in the fabric (congestion or a faulty link) and costs bandwidth and "
           "latency.";
  if (retransmit)
    return " Resends mean packets were lost or dropped in the fabric (congestion or a faulty link); each "
           "costs bandwidth and latency.";
  if (drop)
    return " Drops and discards mean a receive queue or the fabric ran out of buffer (congestion, or a "
           "receiver that does not keep up).";
  return "";
}

// The profiler steps of |r| that [from, to] overlaps, first and last; -1 when none.
std::pair<int64_t, int64_t> StepsOverlapping(const model::RankTrace& r, model::TimeNs from, model::TimeNs to) {
  int64_t first = -1, last = -1;
  for (const model::ProfilerStep& st : r.steps) {
    if (st.end <= from || st.start >= to) continue;
    if (first < 0) first = st.number;
    last = st.number;
  }
  return {first, last};
}

std::vector<NicFinding> NicFindings(const model::Trace& trace, const std::vector<NicPort>& nics) {
  std::map<std::string, model::TimeNs> first_reading;  // host -> its first NIC reading
  for (const model::CounterSeries& c : trace.counters) {
    if (c.owner != model::CounterOwner::kNic || c.time.empty()) continue;
    auto [it, added] = first_reading.emplace(c.host, c.time.front());
    if (!added) it->second = std::min(it->second, c.time.front());
  }
  std::map<std::string, const model::RankTrace*> lowest_rank;  // ranks are in rank order
  for (const model::RankTrace& r : trace.ranks) lowest_rank.emplace(r.hostname, &r);

  std::vector<NicFinding> out;
  for (size_t i = 0; i < nics.size(); ++i) {
    const NicPort& p = nics[i];
    if (p.error_counters.empty()) continue;
    NicFinding f;
    f.port = i;
    f.first_from = p.error_counters.front().first_from;
    f.first_to = p.error_counters.front().first_to;
    std::string counters;
    for (const NicCounterGrowth& g : p.error_counters) {
      f.first_from = std::min(f.first_from, g.first_from);
      f.first_to = std::min(f.first_to, g.first_to);
      counters += (counters.empty() ? "" : ", ") + CounterPhrase(g, p);
    }
    const auto reading = first_reading.find(p.host);
    f.since_first_reading = reading == first_reading.end() ? 0 : f.first_from - reading->second;
    if (const auto r = lowest_rank.find(p.host); r != lowest_rank.end())
      std::tie(f.step_first, f.step_last) = StepsOverlapping(*r->second, f.first_from, f.first_to);
    std::string when =
        Printf("between %.3f s and %.3f s after the host's first NIC counter reading",
               static_cast<double>(f.since_first_reading) * 1e-9,
               static_cast<double>(f.since_first_reading + f.first_to - f.first_from) * 1e-9);
    if (f.step_first >= 0)
      when += f.step_first == f.step_last ? ", in profiler step " + std::to_string(f.step_first)
                                          : ", in profiler steps " + std::to_string(f.step_first) + " to " +
                                                std::to_string(f.step_last);
    f.text = "Host " + p.host + ", NIC port " + p.device + " (" + KindLabel(p.kind) + "): " + counters +
             " in the analyzed window. The first increase came " + when + "." + Hint(p);
    out.push_back(std::move(f));
  }
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

std::vector<GpuMetricTotal> TotalGpuMetrics(const std::vector<GpuMetric>& metrics) {
  struct Sum {
    GpuMetricTotal total;
    double weighted = 0;  // the series' means times their samples
  };
  std::map<std::string, Sum> by_name;
  for (const GpuMetric& m : metrics) {
    Sum& s = by_name[m.name];
    GpuMetricTotal& t = s.total;
    t.name = m.name;
    t.unit = m.unit;
    t.min = t.series == 0 ? m.min : std::min(t.min, m.min);
    t.max = t.series == 0 ? m.max : std::max(t.max, m.max);
    s.weighted += m.mean * static_cast<double>(m.samples);
    t.samples += m.samples;
    ++t.series;
  }
  std::vector<GpuMetricTotal> out;
  for (auto& [name, s] : by_name) {
    s.total.mean = s.total.samples ? s.weighted / static_cast<double>(s.total.samples) : 0.0;
    out.push_back(std::move(s.total));
  }
  return out;
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
    const Span span = i < windows.size() ? WindowSpan(*windows[i]) : Span{};
    for (const model::CounterSeries& s : r.counters)
      AddGpuMetric(s, r.rank, r.hostname, span, &out.gpu_metrics);
  }
  for (const model::CounterSeries& s : trace.counters)
    AddGpuMetric(s, -1, s.host, SpanOf(spans, s.host), &out.gpu_metrics);
  out.wire = WireAgainstClaimed(trace, in_window, port_rates);
  out.gpu_metric_totals = TotalGpuMetrics(out.gpu_metrics);
  out.findings = NicFindings(trace, out.nics);
  return out;
}

}  // namespace commlens::analysis
