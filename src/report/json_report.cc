#include "report/json_report.h"

#include <algorithm>
#include <utility>

#include "model/activity_class.h"
#include "model/collective.h"

namespace commlens::report {

using nlohmann::json;

namespace {

double Us(model::TimeNs ns) { return static_cast<double>(ns) / 1000.0; }
double Round2(double v) { return std::round(v * 100.0) / 100.0; }

// Transfer bandwidths of a contention row's ops: the count always, the quartiles only when
// there are enough of them to mean something.
json SpreadJson(const analysis::BandwidthSpread& s) {
  json j = {{"count", s.count}, {"enough_samples", s.enough()}};
  if (s.enough()) {
    j["busbw_p25_gbps"] = s.p25;
    j["busbw_median_gbps"] = s.median;
    j["busbw_p75_gbps"] = s.p75;
  }
  return j;
}

json BreakdownJson(const analysis::TimeBreakdown& b) {
  json j;
  j["span_us"] = Us(b.span);
  j["busy_us"] = Us(b.busy);
  j["idle_us"] = Us(b.idle);
  j["compute_us"] = Us(b.compute);
  j["non_compute_us"] = Us(b.non_compute);
  j["comm_us"] = Us(b.comm);
  j["memory_us"] = Us(b.memory);
  j["overlap_us"] = Us(b.overlap);
  j["exposed_comm_us"] = Us(b.exposed_comm);
  j["idle_pct"] = Round2(b.idle_pct());
  j["compute_pct"] = Round2(b.compute_pct());
  j["non_compute_pct"] = Round2(b.non_compute_pct());
  // HTA reports NaN when a rank has no communication; JSON has null for that.
  j["overlap_pct"] = b.has_comm() ? json(Round2(b.overlap_pct())) : json(nullptr);
  j["exposed_comm_pct"] = Round2(b.Pct(b.exposed_comm));
  j["gpu_activities"] = b.activities;
  return j;
}

json IssuesJson(const model::ImportStats& stats) {
  json j = json::object();
  for (size_t k = 0; k < static_cast<size_t>(model::ImportIssue::kCount); ++k) {
    auto issue = static_cast<model::ImportIssue>(k);
    if (stats.count(issue) == 0) continue;
    json e;
    e["count"] = stats.count(issue);
    e["description"] = std::string(model::IssueDescription(issue));
    e["examples"] = json::array();
    for (const auto& ex : stats.examples(issue))
      e["examples"].push_back({{"offset", ex.offset}, {"what", ex.what}});
    j[std::string(model::IssueName(issue))] = e;
  }
  return j;
}

json KernelsJson(const analysis::KernelBreakdown& k, model::TimeNs span) {
  json j;
  j["states"] = json::array();
  for (uint8_t bits = 1; bits < 8; ++bits) {
    if (k.state_time[bits] == 0) continue;
    j["states"].push_back({{"state", analysis::ClassStateLabel(bits)},
                           {"time_us", Us(k.state_time[bits])},
                           {"pct_of_span", Round2(k.StatePct(bits, span))}});
  }
  j["class_total_us"] = json::object();
  for (int c = 0; c < 4; ++c)
    j["class_total_us"][std::string(model::ActivityClassName(static_cast<model::ActivityClass>(c)))] =
        Us(k.class_total[c]);
  j["top_kernels"] = json::array();
  for (const auto& s : k.top())
    j["top_kernels"].push_back({{"name", s.name},
                                {"class", std::string(model::ActivityClassName(s.cls))},
                                {"count", s.count},
                                {"total_us", Us(s.total)},
                                {"mean_us", s.mean / 1000.0},
                                {"min_us", Us(s.min)},
                                {"max_us", Us(s.max)},
                                {"stddev_us", s.stddev / 1000.0}});
  j["distinct_kernels"] = k.distinct_names();
  j["rest_total_us"] = Us(k.rest_total());
  return j;
}

json IdleJson(const std::vector<analysis::StreamIdle>& streams) {
  json arr = json::array();
  for (const auto& s : streams) {
    json j;
    j["device"] = s.device;
    j["stream"] = s.stream;
    j["activities"] = s.activities;
    j["busy_us"] = Us(s.busy);
    j["idle_us"] = Us(s.idle);
    for (int k = 0; k < 3; ++k) {
      std::string name(analysis::GapKindName(static_cast<analysis::GapKind>(k)));
      j[name] = {{"count", s.kind_count[k]},
                 {"time_us", Us(s.kind_time[k])},
                 {"ratio", Round2(s.KindShare(k))}};
    }
    j["histogram"] = json::array();
    for (int b = 0; b < analysis::kGapBins; ++b)
      j["histogram"].push_back({{"bin", std::string(analysis::GapBinLabel(b))},
                                {"count", s.bin_count[b]},
                                {"time_us", Us(s.bin_time[b])}});
    j["longest"] = json::array();
    for (const auto& g : s.longest)
      j["longest"].push_back({{"start_us", Us(g.start)},
                              {"length_us", Us(g.length)},
                              {"kind", std::string(analysis::GapKindName(g.kind))},
                              {"before", g.before},
                              {"after", g.after}});
    arr.push_back(std::move(j));
  }
  return arr;
}


json ClockJson(const model::ClockAlignment& c) {
  static constexpr const char* kModes[] = {"auto", "collectives", "none"};
  json j;
  auto check = [](const model::CausalityCheck& k) {
    json cj = {{"checked", k.checked}, {"violations", k.violations}, {"clocks_differ", k.violated()}};
    if (k.violations > 0)
      cj["worst"] = {{"group", k.worst_group}, {"seq", k.worst_seq}, {"ended_rank", k.ended_rank},
                     {"started_rank", k.started_rank}, {"ended_before_start_us", Us(k.worst)}};
    return cj;
  };
  j["mode"] = kModes[static_cast<int>(c.mode)];
  j["applied"] = c.applied;
  j["aligned_per"] = c.aligned_per.empty() ? json(nullptr) : json(c.aligned_per);
  j["aligned_by_check"] = c.aligned_by_check;
  j["causality_raw"] = check(c.raw);
  j["causality_analyzed"] = check(c.aligned);
  j["offsets"] = json::array();
  for (const auto& o : c.ranks)
    j["offsets"].push_back({{"rank", o.rank},
                            {"host", o.host},
                            {"offset_us", Us(o.offset)},
                            {"bound_us", o.bound < 0 ? json(nullptr) : json(Us(o.bound))},
                            {"collectives", o.samples},
                            {"bound_guaranteed", o.consistent && o.bound >= 0}});
  j["notes"] = c.notes;
  return j;
}

// bytes/s -> Gb/s (10^9 bits per second, as line rates are given)
double Gbps(double bytes_per_s) { return bytes_per_s * 8e-9; }

json ErrorCountersJson(const analysis::NicPort& n) {
  json arr = json::array();
  for (const auto& g : n.error_counters)
    arr.push_back({{"name", g.name},
                   {"amount", g.amount},
                   {"lower_bound", g.lower_bound},
                   {"first_from_us", Us(g.first_from)},
                   {"first_to_us", Us(g.first_to)}});
  return arr;
}

json NicsJson(const std::vector<analysis::NicPort>& nics) {
  json arr = json::array();
  for (const auto& n : nics) {
    const double line = n.line_rate_bits_per_s * 1e-9;
    auto pct = [](std::optional<double> p) { return p ? json(Round2(*p)) : json(nullptr); };
    arr.push_back({{"host", n.host},
                   {"device", n.device},
                   {"kind", n.kind},
                   {"tx_bytes", n.tx_bytes},
                   {"rx_bytes", n.rx_bytes},
                   {"samples", n.samples},
                   {"errors", n.errors},
                   {"error_counters", ErrorCountersJson(n)},
                   {"peak_tx_gbps", Gbps(n.peak_tx_bytes_per_s)},
                   {"peak_rx_gbps", Gbps(n.peak_rx_bytes_per_s)},
                   {"mean_tx_gbps", Gbps(n.mean_tx_bytes_per_s)},
                   {"mean_rx_gbps", Gbps(n.mean_rx_bytes_per_s)},
                   {"line_rate_gbps", line > 0 ? json(line) : json(nullptr)},
                   {"peak_line_pct", pct(n.peak_line_pct())},
                   {"mean_line_pct", pct(n.mean_line_pct())},
                   {"wraps", n.wraps},
                   {"resets", n.resets},
                   {"gaps", n.gaps}});
  }
  return arr;
}

json GpuMetricsJson(const std::vector<analysis::GpuMetric>& metrics) {
  json arr = json::array();
  for (const auto& m : metrics)
    arr.push_back({{"rank", m.rank < 0 ? json(nullptr) : json(m.rank)},
                   {"host", m.host},
                   {"device", m.device},
                   {"name", m.name},
                   {"unit", m.unit},
                   {"samples", m.samples},
                   {"mean", m.mean},
                   {"min", m.min},
                   {"max", m.max}});
  return arr;
}

json WireJson(const std::vector<analysis::WireBytes>& wire) {
  json arr = json::array();
  for (const auto& w : wire)
    arr.push_back({{"group", w.group},
                   {"op", std::string(model::CommOpName(w.op))},
                   {"size_min_bytes", w.size_lo},
                   {"count", w.count},
                   {"claimed_bytes", w.claimed_bytes},
                   {"wire_bytes", w.wire_bytes},
                   {"wire_to_claimed", w.ratio()},
                   {"collective_us", Us(w.collective_ns)},
                   {"wire_gbps", Gbps(w.wire_bytes_per_s())},
                   {"line_rate_gbps", w.line_rate_known() ? json(w.line_rate_bits_per_s() * 1e-9) : json(nullptr)},
                   {"wire_line_pct", w.line_rate_known() ? json(Round2(100.0 * w.line_share())) : json(nullptr)}});
  return arr;
}

json NicFindingsJson(const analysis::CounterAnalysis& c) {
  json arr = json::array();
  for (const auto& f : c.findings) {
    const analysis::NicPort& n = c.nics[f.port];
    arr.push_back({{"severity", analysis::NicFinding::kSeverity},
                   {"host", n.host},
                   {"device", n.device},
                   {"kind", n.kind},
                   {"counters", ErrorCountersJson(n)},
                   {"first_increase", {{"from_us", Us(f.first_from)},
                                       {"to_us", Us(f.first_to)},
                                       {"since_first_reading_us", Us(f.since_first_reading)},
                                       {"step_first", f.step_first < 0 ? json(nullptr) : json(f.step_first)},
                                       {"step_last", f.step_last < 0 ? json(nullptr) : json(f.step_last)}}},
                   {"text", f.text}});
  }
  return arr;
}


}  // namespace

json CrossRankJson(const model::Trace& trace, const analysis::CrossRankAnalysis& x) {
  json j;
  j["summary"] = x.summary;
  j["noise"] = {{"steps", x.noise.steps}, {"median_us", Us(x.noise.median)}, {"noise_us", Us(x.noise.noise)}};
  j["clock"] = ClockJson(trace.clock);
  j["stragglers"] = json::array();
  for (const auto& s : x.stragglers)
    j["stragglers"].push_back({{"rank", s.rank},
                               {"last_arrivals", s.last_arrivals},
                               {"matched", s.matched},
                               {"chance_arrivals", s.chance_arrivals},
                               {"consistent", s.consistent},
                               {"mean_lateness_us", Us(s.mean_lateness)},
                               {"delay_wall_us", Us(s.delay)},
                               {"delay_wall_us_per_step", s.delay_per_step < 0 ? json(nullptr) : json(s.delay_per_step / 1000.0)},
                               {"others_waited_rank_time_us", Us(s.cost_to_others)},
                               {"others_waited_rank_time_us_per_step",
                                s.cost_per_step < 0 ? json(nullptr) : json(s.cost_per_step / 1000.0)},
                               {"cause", std::string(analysis::LateCauseName(s.cause))},
                               {"mixed_cause", s.mixed},
                               {"cause_shares", {{"compute", s.cause_share[0]},
                                                 {"host_idle", s.cause_share[1]},
                                                 {"other_collective", s.cause_share[2]}}},
                               {"excess_us", {{"compute", Us(s.excess_compute)},
                                              {"host_idle", Us(s.excess_idle)},
                                              {"other_collective", Us(s.excess_other_comm)}}},
                               {"kernels", s.kernels},
                               {"worst_collective", s.worst_seq < 0 ? json(nullptr)
                                                                    : json{{"group", s.worst_group}, {"seq", s.worst_seq},
                                                                           {"others_waited_rank_time_us", Us(s.worst_cost)}}}});
  j["steps"] = json::array();
  for (const auto& st : x.steps)
    j["steps"].push_back({{"step", st.number},
                          {"collectives", st.collectives},
                          {"most_last_rank", st.most_last_rank < 0 ? json(nullptr) : json(st.most_last_rank)},
                          {"most_last_count", st.most_last_count},
                          {"most_last_rank_time_us", Us(st.most_last_cost)},
                          {"others_waited_rank_time_us", Us(st.cost_to_others)},
                          {"max_skew_us", Us(st.max_skew)}});
  j["hangs"] = json::array();
  for (const auto& h : x.hangs)
    j["hangs"].push_back({{"group", h.group}, {"seq", h.seq}, {"op", h.op}, {"desync", h.desync},
                          {"reached", h.reached}, {"missing", h.missing}, {"waited_us", Us(h.waited)},
                          {"missing_doing", h.missing_doing}, {"detail", h.detail}});
  j["contended_time_us"] = Us(x.contended_time);
  j["contention"] = json::array();
  for (const auto& c : x.contention)
    j["contention"].push_back({{"group", c.group},
                               {"op", std::string(model::CommOpName(c.op))},
                               {"size_min_bytes", c.size_lo},
                               {"alone", SpreadJson(c.alone)},
                               {"overlapped", SpreadJson(c.overlapped)},
                               {"with_groups", c.with_groups},
                               {"transfer_unknown", c.unknown}});
  const analysis::Pipeline& p = x.pipeline;
  j["pipeline"] = {{"detected", p.detected}};
  if (p.detected) {
    j["pipeline"]["stages"] = p.stages;
    j["pipeline"]["microbatches"] = p.microbatches;
    j["pipeline"]["virtual_stages"] = p.virtual_stages;
    j["pipeline"]["replicas"] = p.replicas;
    j["pipeline"]["replica_bubble"] = p.replica_bubble;
    j["pipeline"]["replica_spread"] = p.replica_spread;
    j["pipeline"]["pace_stage"] = p.pace_stage;
    j["pipeline"]["pace_compute_us"] = Us(p.pace_compute);
    j["pipeline"]["median_compute_us"] = Us(p.median_compute);
    j["pipeline"]["schedule"] = p.schedule;
    j["pipeline"]["schedule_rule"] = p.schedule_rule;
    j["pipeline"]["bubble_fraction"] = p.bubble_fraction;
    j["pipeline"]["ideal_fraction"] = p.ideal_fraction;
    j["pipeline"]["idle_known"] = p.idle_known;
    j["pipeline"]["per_stage"] = json::array();
    for (const auto& s : p.per_stage) {
      json steps = json::array();
      for (const auto& st : s.steps)
        steps.push_back({{"step", st.step},
                         {"bubble_share", st.share()},
                         {"compute_us", Us(st.compute)},
                         {"warmup_idle_us", Us(st.warmup_idle)},
                         {"steady_idle_us", Us(st.steady_idle)},
                         {"cooldown_idle_us", Us(st.cooldown_idle)}});
      j["pipeline"]["per_stage"].push_back({{"rank", s.rank},
                                            {"stage", s.stage},
                                            {"replica", s.replica},
                                            {"compute_us", Us(s.compute)},
                                            {"idle_share", s.idle_share},
                                            {"paced_ideal_share", s.paced_ideal >= 0 ? json(s.paced_ideal) : json(nullptr)},
                                            {"warmup_idle_us", Us(s.warmup_idle)},
                                            {"steady_idle_us", Us(s.steady_idle)},
                                            {"cooldown_idle_us", Us(s.cooldown_idle)},
                                            {"steps", steps}});
    }
  }
  j["protocols"] = json::array();
  for (const auto& r : x.protocols)
    j["protocols"].push_back({{"group", r.group},
                              {"op", std::string(model::CommOpName(r.op))},
                              {"size_min_bytes", r.size_lo},
                              {"algorithm", r.algorithm},
                              {"protocol", r.protocol},
                              {"channels", r.channels},
                              {"count", r.count},
                              {"transfer_busbw_gbps", r.busbw}});
  return j;
}

// A bucket's ops with a known transfer time: their waiting and transfer, the bandwidth
// from the transfer, whom they waited for, and the benchmark at their size.
static json TransferJson(const analysis::CollectiveBucket& b) {
  const double wait = b.wait_share();
  return {{"count", b.transfer_count},
          {"bytes", b.transfer_bytes},
          {"kernel_us", Us(b.transfer_kernel)},
          {"transfer_us", Us(b.transfer)},
          {"waiting_pct", wait < 0 ? json(nullptr) : json(Round2(100.0 * wait))},
          {"algbw_gbps", b.transfer > 0 ? json(b.transfer_algbw_gbps) : json(nullptr)},
          {"busbw_gbps", b.transfer > 0 ? json(b.transfer_busbw_gbps) : json(nullptr)},
          {"waited_for_rank", b.waited_for_rank < 0 ? json(nullptr) : json(b.waited_for_rank)},
          {"bench_busbw_gbps", b.bench_busbw_gbps < 0 ? json(nullptr) : json(b.bench_busbw_gbps)}};
}

json CollectivesJson(const analysis::CollectiveAnalysis& c) {
  json j;
  j["operations"] = c.operations;
  j["phase_timed"] = c.phase_timed;
  j["buckets"] = json::array();
  for (const auto& b : c.buckets) {
    json batch_ops = json::object();
    for (const auto& [op, n] : b.batch_ops) batch_ops[std::string(model::CommOpName(op))] = n;
    j["buckets"].push_back({{"group", b.group_name},
                            {"group_desc", b.group_desc},
                            {"group_size", b.group_size},
                            {"op", std::string(model::CommOpName(b.op))},
                            {"batched", b.batched},
                            {"batch_ops", batch_ops},
                            {"size_min_bytes", b.size_lo},
                            {"size_max_bytes", b.size_hi},
                            {"size_known", b.size_lo >= 0},
                            {"count", b.count},
                            {"untimed", b.untimed},
                            {"ranks", b.ranks},
                            {"total_us", Us(b.total)},
                            {"p50_us", Us(b.p50)},
                            {"p99_us", Us(b.p99)},
                            {"max_us", Us(b.max)},
                            {"bytes", b.bytes},
                            {"kernel_algbw_gbps", b.kernel_algbw_gbps},
                            {"kernel_busbw_gbps", b.kernel_busbw_gbps},
                            {"transfer", TransferJson(b)}});
  }
  j["groups"] = json::array();
  for (const auto& g : c.groups)
    j["groups"].push_back({{"group", g.group_name},
                           {"group_desc", g.group_desc},
                           {"matched", g.matched},
                           {"unmatched", g.unmatched},
                           {"partial", g.partial},
                           {"messages", g.messages},
                           {"start_skew_p50_us", Us(g.skew_p50)},
                           {"start_skew_p99_us", Us(g.skew_p99)},
                           {"start_skew_max_us", Us(g.skew_max)},
                           {"end_skew_p50_us", Us(g.end_skew_p50)},
                           {"end_skew_p99_us", Us(g.end_skew_p99)},
                           {"end_skew_max_us", Us(g.end_skew_max)}});
  j["ranks"] = json::array();
  for (const auto& r : c.ranks)
    j["ranks"].push_back({{"rank", r.rank},
                          {"in_collectives_us", Us(r.in_collectives)},
                          {"waiting_us", Us(r.waiting)},
                          {"transferring_us", Us(r.transferring())},
                          {"last_arrivals", r.last_arrivals},
                          {"matched", r.matched},
                          {"recv_waiting_us", Us(r.recv_waiting)},
                          {"recv_transfer_us", Us(r.recv_transfer)}});
  return j;
}

json AnalyzeToJson(const model::Trace& trace, const analysis::JobAnalysis& job) {
  json doc;
  doc["schema"] = kAnalyzeSchema;
  doc["schema_version"] = kAnalyzeSchemaVersion;
  doc["inputs"] = json::array();
  doc["ranks"] = json::array();
  for (const auto& a : job.ranks) {
    const model::RankTrace& r = *a.trace;
    json in;
    in["path"] = r.path;
    in["rank"] = r.rank;
    in["format"] = r.format;
    in["bytes"] = r.input_bytes;
    in["notes"] = r.notes;
    in["import_issues"] = IssuesJson(r.stats);
    doc["inputs"].push_back(std::move(in));

    json j = BreakdownJson(a.time.total);
    j["rank"] = r.rank;
    j["hostname"] = r.hostname;
    j["world_size"] = r.world_size;
    j["window"] = {{"filtered", a.window.filtered},
                   {"dropped_activities", a.window.dropped},
                   {"launch_cutoff_ns", a.window.filtered ? json(a.window.cutoff) : json(nullptr)}};
    j["steps"] = json::array();
    for (const auto& s : a.time.steps) {
      json sj = BreakdownJson(s.time);
      sj["step"] = s.number;
      j["steps"].push_back(std::move(sj));
    }
    j["kernel_breakdown"] = KernelsJson(a.kernels, a.time.total.span);
    j["idle_gaps"] = IdleJson(a.idle);
    doc["ranks"].push_back(std::move(j));
  }
  doc["failures"] = json::array();
  for (const auto& f : trace.failures)
    doc["failures"].push_back({{"path", f.path}, {"message", f.message}});
  doc["warnings"] = trace.warnings;
  if (!trace.sampler_notes.empty()) doc["sampler_notes"] = trace.sampler_notes;
  doc["steps"] = json::array();
  for (const auto& s : job.steps) {
    json sj = BreakdownJson(s.mean);
    sj["step"] = s.number;
    sj["ranks"] = s.ranks;
    sj["left_out"] = s.left_out.empty() ? json(nullptr) : json(s.left_out);
    doc["steps"].push_back(std::move(sj));
  }
  {
    const analysis::StepChoice& c = job.step_choice;
    json chosen = {{"selected_by_user", c.selected_by_user}, {"summarized", c.Summarized()},
                   {"median_step_us", Us(job.cross_rank.noise.median)}, {"left_out", json::array()}};
    for (const auto& s : c.steps)
      if (!s.left_out.empty())
        chosen["left_out"].push_back({{"step", s.number}, {"why", s.left_out}, {"length_us", Us(s.length)}});
    doc["step_choice"] = std::move(chosen);
  }
  doc["world_size"] = trace.world_size;
  doc["missing_ranks"] = trace.missing_ranks;  // the first 1,024
  doc["missing_count"] = trace.missing_count;
  doc["kernel_breakdown"] = KernelsJson(job.kernels, job.span_rank_time);
  doc["findings"] = json::array();
  for (const analysis::Finding& f : job.findings)
    doc["findings"].push_back({{"rule", f.rule},
                               {"text", f.text},
                               {"section", f.section},
                               {"cost_wall_us_per_step", f.cost_ns_per_step / 1000.0},
                               {"first", f.first}});
  // The what-if replay's verdict (analysis/whatif.h), when it ran.
  if (job.replay.done) doc["replay"] = ReplayJson(job.replay);
  doc["collectives"] = CollectivesJson(job.collectives);
  doc["cross_rank"] = CrossRankJson(trace, job.cross_rank);
  doc["parallel_roles"] = RolesJson(job.roles);
  // Only when the trace has counters, so documents without them stay as they were.
  if (!job.counters.nics.empty()) {
    doc["nics"] = NicsJson(job.counters.nics);
    doc["nic_wire_bytes"] = WireJson(job.counters.wire);
    doc["nic_findings"] = NicFindingsJson(job.counters);
  }
  if (!job.counters.gpu_metrics.empty()) doc["gpu_metrics"] = GpuMetricsJson(job.counters.gpu_metrics);
  return doc;
}

// The replay's verdict: S, the parts fixed first, and the heatmap (S per part and step).
json ReplayJson(const analysis::ReplayVerdict& r) {
  json parts = json::array();
  for (const auto& p : r.parts)
    parts.push_back({{"part", p.label()}, {"slowdown", p.slowdown}, {"step_us", Us(p.step)}, {"gain", p.gain}});
  json heat = json::array();
  for (const auto& h : r.heat) heat.push_back({{"part", h.part}, {"per_step", h.per_step}});
  auto shares = [](const std::vector<analysis::ReplayVerdict::Share>& v) {
    json a = json::array();
    for (const auto& x : v) a.push_back({{"part", x.part}, {"slowdown", x.slowdown}});
    return a;
  };
  return {{"slowdown", r.slowdown},
          {"replay_error", r.replay_error},
          {"step_us", Us(r.step)},
          {"no_delay_step_us", Us(r.no_delay_step)},
          {"parts", parts},
          {"attribution", {{"by_rank", shares(r.by_rank)}, {"by_stage", shares(r.by_stage)}, {"by_op", shares(r.by_op)},
                           {"by_group", shares(r.by_group)}}},
          {"heatmap", {{"steps", r.steps}, {"rows", heat}}}};
}

// Each group's role and the rule that named it; each role's communication and exposed part
// per step and over the summary (mean rank, us, and % of the step).
json RolesJson(const analysis::ParallelRoles& roles) {
  json out = {{"groups", json::array()}, {"has_kernels", roles.has_kernels}, {"steps", json::array()}};
  for (const analysis::GroupRole& g : roles.groups) {
    out["groups"].push_back({{"group", g.group},
                             {"description", g.description},
                             {"size", g.size},
                             {"role", analysis::RoleName(g.role)},
                             {"rule", g.rule}});
  }
  const std::vector<analysis::ParallelRole> present = roles.Present();
  auto times = [&](const analysis::RoleTimes& t) {
    json comm = json::object(), exposed = json::object(), pct = json::object();
    for (analysis::ParallelRole r : present) {
      const std::string name(analysis::RoleName(r));
      comm[name] = Us(t.comm[static_cast<size_t>(r)]);
      exposed[name] = Us(t.exposed[static_cast<size_t>(r)]);
      pct[name] = Round2(t.ExposedPct(r));
    }
    return json{{"ranks", t.ranks}, {"span_us", Us(t.span)}, {"comm_us", comm}, {"exposed_us", exposed},
                {"exposed_pct", pct}};
  };
  if (roles.has_kernels) {
    for (const analysis::RoleTimes& t : roles.steps) {
      json j = times(t);
      j["step"] = t.step;
      out["steps"].push_back(std::move(j));
    }
    out["summary"] = times(roles.summary);
  } else {
    out["summary"] = nullptr;
  }
  return out;
}

}  // namespace commlens::report
