// A fixed, hand-made benchmark run for the reporter and JSON tests.
#pragma once

#include "bench/collective_table.h"
#include "bench/reporter.h"

namespace commlens::bench::testing {

inline RunInfo SampleRun() {
  RunInfo run;
  run.tool_version = "0.1.0";
  run.start_time = "2026-01-02T03:04:05Z";
  run.launcher = "local";
  run.hosts = {"node-a"};
  run.nprocs = 1;
  run.nranks = 2;
  run.gpus_per_process = 2;
  run.nccl_version_code = 22809;
  run.nccl_version = "2.28.9";
  run.cuda_runtime_version = 13000;
  run.cuda_driver_version = 13010;
  run.gpus = {{0, "node-a", 0, "NVIDIA H200", "0000:18:00.0", 150754820096, 9, 0},
              {1, "node-a", 1, "NVIDIA H200", "0000:2A:00.0", 150754820096, 9, 0}};
  return run;
}

inline BenchConfig SampleConfig() {
  BenchConfig c;
  c.collectives = {model::CommOp::kAllReduce, model::CommOp::kAllToAll};
  c.min_bytes = 8;
  c.max_bytes = 1 << 20;
  c.json_path = "out.json";
  c.timeout = std::chrono::milliseconds(30000);
  return c;
}

inline PlacementResult Placement(double t, double alg, double bus, std::optional<int64_t> wrong,
                                 double p50, double p99) {
  PlacementResult p;
  p.time_us = t;
  p.algbw_gbps = alg;
  p.busbw_gbps = bus;
  p.wrong = wrong;
  p.p50_us = p50;
  p.p99_us = p99;
  p.min_us = p50 - 0.5;
  p.max_us = p99;
  return p;
}

// Runs the reporter over two collectives and returns it (table text into |out|).
inline BenchReport SampleReport(std::FILE* out) {
  Reporter reporter(out);
  BenchConfig config = SampleConfig();
  reporter.BeginRun(SampleRun(), config);
  reporter.BeginCollective(*FindCollective("all_reduce"), config, 2);
  reporter.AddRow({8, 2, 8, 8, Placement(10.25, 0.00, 0.00, 0, 10.5, 12.75),
                   Placement(10.5, 0.00, 0.00, 0, 10.25, 11.0)});
  reporter.AddRow({1 << 20, 262144, 1 << 20, 1 << 20, Placement(25.5, 41.12, 41.12, 0, 25, 31),
                   Placement(24.0, 43.69, 43.69, 3, 24.5, 26.25)});
  reporter.EndCollective();
  reporter.BeginCollective(*FindCollective("alltoall"), config, 2);
  reporter.AddRow({1 << 20, 131072, 1 << 20, 1 << 20, Placement(123456.0, 0.01, 0.0042, 0, 99, 100),
                   Placement(20.0, 52.43, 26.21, std::nullopt, 19.5, 22.0)});
  reporter.EndCollective();
  reporter.EndRun("2026-01-02T03:05:00Z");
  return reporter.report();
}

}  // namespace commlens::bench::testing
