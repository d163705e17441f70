#include "bench/jacobi/jacobi_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/run_json.h"
#include "common/json_writer.h"

namespace commlens::bench {

using nlohmann::json;

int64_t JacobiReport::WrongTotal() const {
  int64_t total = 0;
  for (const JacobiVariantResult& v : variants) total += v.wrong.value_or(0);
  return total;
}

std::string FormatJacobiReport(const JacobiReport& r) {
  const JacobiConfig& c = r.config;
  std::string s = fmt::format(
      "# commlens bench jacobi {}: NCCL {}, {} ranks, hosts {}\n"
      "# grid {} x {} (nx x ny, float), rows split over ranks, periodic rows, fixed first "
      "and last columns; iters {}, warmup {}\n",
      r.run.tool_version, r.run.nccl_version, r.run.nranks, fmt::join(r.run.hosts, ","), c.nx,
      c.ny, c.iters, c.warmup);
  if (c.check)
    s += fmt::format("# check: {} iterations of a {} x {} grid against the CPU reference\n",
                     c.check_iters, c.check_nx, c.check_ny);
  if (r.single_gpu_iteration_us > 0)
    s += fmt::format("# one GPU, whole grid: {:.2f} us per iteration\n",
                     r.single_gpu_iteration_us);
  s += fmt::format("#\n# {:<13} {:>12} {:>9} {:>11} {:>7} {:>12}\n", "variant", "iter (us)",
                   "speedup", "efficiency", "#wrong", "max |diff|");
  for (const JacobiVariantResult& v : r.variants) {
    std::string speed = r.single_gpu_iteration_us > 0 ? fmt::format("{:.2f}x", v.speedup) : "-";
    std::string eff =
        r.single_gpu_iteration_us > 0 ? fmt::format("{:.1f}%", v.efficiency * 100) : "-";
    s += fmt::format("  {:<13} {:>12.2f} {:>9} {:>11} {:>7} {:>12.3g}\n", v.variant,
                     v.iteration_us, speed, eff, v.wrong ? std::to_string(*v.wrong) : "N/A",
                     v.max_abs_diff);
  }
  int64_t wrong = r.WrongTotal();
  s += fmt::format("#\n# Out of bounds values : {} {}\n", wrong, wrong ? "FAILED" : "OK");
  return s;
}

std::string JacobiReportToJson(const JacobiReport& r) {
  json root = BenchFileHeader(r.run, "commlens.bench.jacobi", 1, {{"time", "microseconds"}});
  const JacobiConfig& c = r.config;
  json variants = json::array();
  for (JacobiVariant v : c.variants) variants.push_back(JacobiVariantName(v));
  root["args"] = {{"nx", c.nx},
                  {"ny", c.ny},
                  {"iters", c.iters},
                  {"warmup", c.warmup},
                  {"check", c.check},
                  {"check_grid", {c.check_nx, c.check_ny}},
                  {"check_iters", c.check_iters},
                  {"single_gpu", c.single_gpu},
                  {"variants", variants}};
  root["single_gpu_iteration_us"] =
      r.single_gpu_iteration_us > 0 ? json(r.single_gpu_iteration_us) : json(nullptr);
  json results = json::array();
  for (const JacobiVariantResult& v : r.variants)
    results.push_back({{"variant", v.variant},
                       {"iteration_us", v.iteration_us},
                       {"speedup", v.speedup},
                       {"efficiency", v.efficiency},
                       {"wrong", v.wrong ? json(*v.wrong) : json(nullptr)},
                       {"max_abs_diff", v.max_abs_diff}});
  root["results"] = results;
  root["wrong_total"] = r.WrongTotal();
  root["ok"] = r.WrongTotal() == 0;
  return JsonText(root, 2) + "\n";
}

Status WriteJacobiReport(const JacobiReport& report, const std::string& path) {
  return WriteWholeFile(path, JacobiReportToJson(report));
}

}  // namespace commlens::bench
