#include "bench/moe/moe_report.h"


#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/run_json.h"
#include "common/json_writer.h"

namespace commlens::bench {

namespace {

using nlohmann::json;

std::string Wrong(const std::optional<int64_t>& wrong) {
  return wrong ? std::to_string(*wrong) : "N/A";
}

json PhaseToJson(const MoePhaseResult& p) {
  return {{"mean_us", p.mean_us}, {"p50_us", p.p50_us}, {"p99_us", p.p99_us},
          {"min_us", p.min_us},   {"max_us", p.max_us}, {"gbps", p.gbps},
          {"remote_gbps", p.remote_gbps},
          {"wrong", p.wrong ? json(*p.wrong) : json(nullptr)}};
}

}  // namespace

int64_t MoeReport::WrongTotal() const {
  int64_t total = 0;
  for (const MoeBackendResult& b : backends)
    total += b.dispatch.wrong.value_or(0) + b.combine.wrong.value_or(0);
  return total;
}

std::string FormatMoeReport(const MoeReport& r) {
  const MoeConfig& c = r.config;
  const MoeTraffic& t = r.traffic;
  std::string s = fmt::format(
      "# commlens bench moe {}: NCCL {}, {} ranks, hosts {}\n"
      "# {} tokens/rank x hidden {} (bf16, {} B/token), {} experts ({}/rank), top-{}, "
      "imbalance {:g}, seed {}, iters {}, warmup {}, check {}\n"
      "# dispatch: a token goes once to each rank holding one of its experts "
      "({:.2f} ranks/token on average); busiest rank receives {} tokens ({:.1f} MB), {} from "
      "other ranks\n"
      "# combine: the reverse exchange, then each token sums its copies x experts per rank\n"
      "# time: per iteration the max over ranks; GB/s = busiest rank's bytes / p50 (own "
      "tokens included, as DeepEP); remote = bytes crossing ranks / p50\n#\n",
      r.run.tool_version, r.run.nccl_version, r.run.nranks, fmt::join(r.run.hosts, ","),
      c.tokens, c.hidden, t.token_bytes, c.experts,
      r.run.nranks > 0 ? c.experts / r.run.nranks : 0, c.topk, c.imbalance, c.seed, c.iters,
      c.warmup, c.check ? "on" : "off", t.mean_ranks_per_token, t.max_recv_tokens,
      t.max_recv_tokens * t.token_bytes / 1e6, t.max_remote_recv_tokens);
  s += fmt::format("# {:<12} {:>5}  {:>38}  {:>38}\n", "", "", "---------- dispatch ----------",
                   "----------- combine ------------");
  s += fmt::format("# {:<12} {:>5}  {:>8} {:>8} {:>8} {:>6} {:>5}  {:>8} {:>8} {:>8} {:>6} {:>5}\n",
                   "backend", "init", "p50(us)", "p99(us)", "GB/s", "remote", "wrong", "p50(us)",
                   "p99(us)", "GB/s", "remote", "wrong");
  for (const MoeBackendResult& b : r.backends) {
    auto initiator = BackendFromName(b.backend);
    s += fmt::format("  {:<12} {:>5}  {:>8.1f} {:>8.1f} {:>8.1f} {:>6.1f} {:>5}  {:>8.1f} {:>8.1f} "
                     "{:>8.1f} {:>6.1f} {:>5}\n",
                     b.backend, initiator ? BackendInitiator(*initiator) : "?", b.dispatch.p50_us,
                     b.dispatch.p99_us, b.dispatch.gbps, b.dispatch.remote_gbps,
                     Wrong(b.dispatch.wrong), b.combine.p50_us, b.combine.p99_us, b.combine.gbps,
                     b.combine.remote_gbps, Wrong(b.combine.wrong));
  }
  if (r.backends.size() > 1) {
    const MoeBackendResult* fastest = &r.backends.front();
    for (const MoeBackendResult& b : r.backends)
      if (b.dispatch.p50_us + b.combine.p50_us <
          fastest->dispatch.p50_us + fastest->combine.p50_us)
        fastest = &b;
    s += fmt::format("# fastest dispatch+combine: {} ({:.1f} us)\n", fastest->backend,
                     fastest->dispatch.p50_us + fastest->combine.p50_us);
  }
  int64_t wrong = r.WrongTotal();
  s += fmt::format("#\n# Out of bounds values : {} {}\n", wrong, wrong ? "FAILED" : "OK");
  return s;
}

std::string MoeReportToJson(const MoeReport& r) {
  json root = BenchFileHeader(r.run, "commlens.bench.moe", 1,
                              {{"time", "microseconds"},
                               {"bandwidth", "GB/s (1e9 bytes per second)"}});
  json backends = json::array();
  for (Backend b : r.config.backends) backends.push_back(BackendName(b));
  const MoeConfig& c = r.config;
  root["args"] = {{"tokens", c.tokens},       {"hidden", c.hidden},   {"experts", c.experts},
                  {"topk", c.topk},           {"imbalance", c.imbalance}, {"seed", c.seed},
                  {"iters", c.iters},         {"warmup", c.warmup},   {"check", c.check},
                  {"backends", backends},     {"dtype", "bfloat16"}};
  const MoeTraffic& t = r.traffic;
  root["traffic"] = {{"token_bytes", t.token_bytes},
                     {"max_recv_tokens", t.max_recv_tokens},
                     {"max_remote_recv_tokens", t.max_remote_recv_tokens},
                     {"total_token_copies", t.total_token_copies},
                     {"mean_ranks_per_token", t.mean_ranks_per_token}};
  json results = json::array();
  for (const MoeBackendResult& b : r.backends)
    results.push_back({{"backend", b.backend},
                       {"dispatch", PhaseToJson(b.dispatch)},
                       {"combine", PhaseToJson(b.combine)}});
  root["results"] = results;
  root["wrong_total"] = r.WrongTotal();
  root["ok"] = r.WrongTotal() == 0;
  return JsonText(root, 2) + "\n";
}

Status WriteMoeReport(const MoeReport& report, const std::string& path) {
  return WriteWholeFile(path, MoeReportToJson(report));
}

}  // namespace commlens::bench
