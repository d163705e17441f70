#include "cli/bench_curves.h"

#include <fmt/format.h>

#include "bench/bench_json.h"

namespace commlens::cli {

Result<std::vector<analysis::BenchCurve>> ReadBenchCurves(const std::string& path) {
  COMMLENS_ASSIGN_OR_RETURN(bench::BenchReport run, bench::ReadBenchReport(path));
  std::vector<analysis::BenchCurve> curves;
  for (const bench::CollectiveResult& c : run.collectives) {
    analysis::BenchCurve curve;
    curve.op = model::CommOpFromName(c.comm_op.empty() ? c.name : c.comm_op);
    curve.ranks = run.run.nranks;
    curve.label = c.backend == "nccl" ? fmt::format("{} (benchmark, {} ranks)", c.name, run.run.nranks)
                                      : fmt::format("{} on {} (benchmark, {} ranks)", c.name, c.backend, run.run.nranks);
    for (const bench::SizeResult& r : c.rows) {
      if (r.size_bytes <= 0) continue;
      curve.size_bytes.push_back(r.size_bytes);
      curve.busbw_gbps.push_back(r.out_of_place.busbw_gbps);
    }
    if (!curve.size_bytes.empty()) curves.push_back(std::move(curve));
  }
  if (curves.empty()) return Status::Error(fmt::format("{}: the benchmark holds no measured size", path));
  return curves;
}

}  // namespace commlens::cli
