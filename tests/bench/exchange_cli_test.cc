// The options of the exchange benchmarks (alltoall --backend, bench moe, bench jacobi),
// their tables and JSON files (parsed back).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "bench/backend.h"
#include "bench/bench_cli.h"
#include "bench/bench_json.h"
#include "bench/jacobi/jacobi_cli.h"
#include "bench/jacobi/jacobi_report.h"
#include "bench/moe/moe_cli.h"
#include "bench/moe/moe_report.h"
#include "bench/reporter.h"

namespace commlens::bench {
namespace {

// Parses |args| into |parsed| as the subcommand would; false with |error| on failure.
template <typename Args, typename Add>
bool ParseInto(std::vector<std::string> args, Args* parsed, Add add, std::string* error) {
  CLI::App app("test");
  add(app, parsed);
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    *error = e.what();
    return false;
  }
  return true;
}

Result<BenchConfig> ParseBench(std::vector<std::string> args) {
  BenchCliArgs a;
  std::string error;
  if (!ParseInto(std::move(args), &a, AddBenchOptions, &error)) return Error(error);
  return BuildConfig(a);
}

Result<MoeConfig> ParseMoe(std::vector<std::string> args) {
  MoeCliArgs a;
  std::string error;
  if (!ParseInto(std::move(args), &a, AddMoeOptions, &error)) return Error(error);
  return BuildMoeConfig(a);
}

Result<JacobiConfig> ParseJacobi(std::vector<std::string> args) {
  JacobiCliArgs a;
  std::string error;
  if (!ParseInto(std::move(args), &a, AddJacobiOptions, &error)) return Error(error);
  return BuildJacobiConfig(a);
}

TEST(Backends, ParseListsAllAndAliases) {
  auto b = ParseBackends({"nvshmem,nccl", "nccl_device", "nvshmem"});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, (std::vector<Backend>{Backend::kNvshmem, Backend::kNccl, Backend::kNcclDevice}));
  EXPECT_EQ(ParseBackends({"all"})->size(), 3u);
  EXPECT_EQ(*ParseBackends({}), std::vector<Backend>{Backend::kNccl});
  EXPECT_NE(ParseBackends({"gin"}).status().message().find("unknown backend 'gin'"),
            std::string::npos);
  EXPECT_EQ(BackendInitiator(Backend::kNccl), "CPU");
  EXPECT_EQ(BackendInitiator(Backend::kNvshmem), "GPU");
}

TEST(BenchCliBackend, AlltoallOnEveryBackend) {
  Result<BenchConfig> c = ParseBench({"alltoall", "--backend", "all", "--ctas", "16"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->backends.size(), 3u);
  EXPECT_EQ(c->ctas, 16);
}

TEST(BenchCliBackend, DeviceBackendsRunAlltoallAloneAndOneGpuPerProcess) {
  Result<BenchConfig> c = ParseBench({"all_reduce", "--backend", "nvshmem"});
  EXPECT_NE(c.status().message().find("runs alltoall only"), std::string::npos);
  c = ParseBench({"alltoall", "--backend", "nccl-device", "-g", "2"});
  EXPECT_NE(c.status().message().find("one GPU per process"), std::string::npos);
  c = ParseBench({"alltoall", "--backend", "tcp"});
  EXPECT_NE(c.status().message().find("unknown backend"), std::string::npos);
}

TEST(MoeCli, DefaultsAndOptions) {
  Result<MoeConfig> d = ParseMoe({});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, MoeConfig());
  Result<MoeConfig> c = ParseMoe({"--tokens", "128", "--hidden", "4096", "--experts", "64",
                                  "--topk", "6", "--imbalance", "0.8", "--seed", "7",
                                  "--backend", "nccl,nvshmem", "-n", "9", "--timeout", "5s"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->tokens, 128);
  EXPECT_EQ(c->token_bytes(), 8192);
  EXPECT_EQ(c->topk, 6);
  EXPECT_DOUBLE_EQ(c->imbalance, 0.8);
  EXPECT_EQ(c->seed, 7u);
  EXPECT_EQ(c->backends, (std::vector<Backend>{Backend::kNccl, Backend::kNvshmem}));
  EXPECT_EQ(c->timeout, std::chrono::milliseconds(5000));
  EXPECT_NE(ParseMoe({"--topk", "0"}).status().message().find("--topk"), std::string::npos);
}

TEST(JacobiCli, DefaultsAndOptions) {
  Result<JacobiConfig> d = ParseJacobi({});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, JacobiConfig());
  Result<JacobiConfig> c = ParseJacobi({"--variant", "all", "--nx", "4096", "--ny", "2048",
                                        "-n", "100", "--no-single-gpu", "--check-iters", "7"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->variants.size(), 5u);
  EXPECT_EQ(c->nx, 4096);
  EXPECT_FALSE(c->single_gpu);
  EXPECT_EQ(c->check_iters, 7);
  EXPECT_NE(ParseJacobi({"--variant", "cuda-aware-mpi"}).status().message().find("unknown variant"),
            std::string::npos);
}

RunInfo SampleRun() {
  RunInfo run;
  run.tool_version = "0.1.0";
  run.nranks = 2;
  run.nprocs = 2;
  run.hosts = {"h1"};
  run.nccl_version = "2.28.9";
  run.gpus = {{0, "h1", 0, "NVIDIA H200", "0000:01:00.0", 1, 9, 0},
              {1, "h1", 1, "NVIDIA H200", "0000:02:00.0", 1, 9, 0}};
  return run;
}

TEST(MoeReport, TableAndJsonAgree) {
  MoeReport r;
  r.run = SampleRun();
  r.config.backends = {Backend::kNccl, Backend::kNvshmem};
  r.traffic = {14336, 7000, 3500, 14000, 1.71};
  MoePhaseResult d{100, 98, 120, 90, 130, 1024, 512, 0};
  MoePhaseResult k{110, 108, 140, 100, 150, 929, 464, 0};
  r.backends = {{"nccl", d, k}, {"nvshmem", k, d}};
  std::string table = FormatMoeReport(r);
  EXPECT_NE(table.find("nvshmem"), std::string::npos);
  EXPECT_NE(table.find("fastest dispatch+combine"), std::string::npos);
  EXPECT_NE(table.find("Out of bounds values : 0 OK"), std::string::npos);
  auto j = nlohmann::json::parse(MoeReportToJson(r));
  EXPECT_EQ(j["schema"], "commlens.bench.moe");
  EXPECT_EQ(j["results"].size(), 2u);
  EXPECT_EQ(j["results"][1]["backend"], "nvshmem");
  EXPECT_DOUBLE_EQ(j["results"][0]["dispatch"]["p50_us"].get<double>(), 98);
  EXPECT_EQ(j["traffic"]["max_recv_tokens"], 7000);
  EXPECT_EQ(j["args"]["backends"][1], "nvshmem");
  EXPECT_EQ(j["machine"]["nranks"], 2);
  EXPECT_TRUE(j["ok"].get<bool>());
  r.backends[0].combine.wrong = 3;
  EXPECT_NE(FormatMoeReport(r).find("3 FAILED"), std::string::npos);
}

TEST(JacobiReport, TableAndJsonAgree) {
  JacobiReport r;
  r.run = SampleRun();
  r.config.variants = {JacobiVariant::kNccl, JacobiVariant::kNvshmemNb};
  r.single_gpu_iteration_us = 500;
  r.variants = {{"nccl", 280, 500.0 / 280, 500.0 / 280 / 2, 0, 0},
                {"nvshmem-nb", 260, 500.0 / 260, 500.0 / 260 / 2, 0, 0}};
  std::string table = FormatJacobiReport(r);
  EXPECT_NE(table.find("nvshmem-nb"), std::string::npos);
  EXPECT_NE(table.find("96.2%"), std::string::npos);  // 500 / (2 x 260)
  auto j = nlohmann::json::parse(JacobiReportToJson(r));
  EXPECT_EQ(j["schema"], "commlens.bench.jacobi");
  EXPECT_DOUBLE_EQ(j["single_gpu_iteration_us"].get<double>(), 500);
  EXPECT_EQ(j["results"][1]["variant"], "nvshmem-nb");
  EXPECT_NEAR(j["results"][1]["efficiency"].get<double>(), 0.9615, 1e-4);
  EXPECT_EQ(j["args"]["variants"][0], "nccl");
}

// Several backends of alltoall: a side-by-side table follows, the in-place columns of the
// device backends are blank, and the JSON keeps both facts.
TEST(AlltoallBackends, SideBySideTableAndJson) {
  BenchReport report;
  report.run = SampleRun();
  report.config.collectives = {model::CommOp::kAllToAll};
  report.config.backends = {Backend::kNccl, Backend::kNcclDevice};
  for (const char* backend : {"nccl", "nccl-device"}) {
    CollectiveResult c;
    c.name = "alltoall";
    c.comm_op = "all_to_all";
    c.dtype = "float";
    c.redop = "none";
    c.busbw_factor = 0.5;
    c.backend = backend;
    c.in_place = c.backend == "nccl";
    SizeResult row;
    row.size_bytes = 1 << 20;
    row.out_of_place.busbw_gbps = c.in_place ? 100 : 150;
    row.out_of_place.p50_us = c.in_place ? 10 : 7;
    row.out_of_place.wrong = 0;
    c.rows = {row};
    report.collectives.push_back(c);
  }
  std::string table = FormatReport(report);
  EXPECT_NE(table.find("alltoall on nccl-device (GPU-initiated; out-of-place only)"),
            std::string::npos);
  EXPECT_NE(table.find("side by side"), std::string::npos);
  EXPECT_NE(table.find("nccl-device\n"), std::string::npos);  // the best backend at 1 MiB
  Result<BenchReport> back = ParseBenchReport(BenchReportToJson(report), "x.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->collectives[1].backend, "nccl-device");
  EXPECT_FALSE(back->collectives[1].in_place);
  EXPECT_EQ(back->config.backends, report.config.backends);
}

}  // namespace
}  // namespace commlens::bench
