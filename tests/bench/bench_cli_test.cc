#include "bench/bench_cli.h"

#include <gtest/gtest.h>

#include "bench/errors.h"

namespace commlens::bench {
namespace {

// Parses |args| as `commlens bench ARGS` would.
Result<BenchConfig> Parse(std::vector<std::string> args) {
  CLI::App app("test");
  BenchCliArgs parsed;
  AddBenchOptions(app, &parsed);
  std::reverse(args.begin(), args.end());  // CLI11 parses a vector back to front
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return Error(std::string("parse: ") + e.what());
  }
  return BuildConfig(parsed);
}

TEST(BenchCli, DefaultsComeFromTheConfigStruct) {
  Result<BenchConfig> c = Parse({});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(*c, BenchConfig());
}

TEST(BenchCli, NcclTestsStyleArguments) {
  Result<BenchConfig> c = Parse({"all_gather", "-b", "8", "-e", "1G", "-f", "2", "-g", "4", "-n",
                                 "50", "-w", "3", "-d", "bfloat16", "-o", "max", "-c", "0"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->collectives, std::vector<model::CommOp>{model::CommOp::kAllGather});
  EXPECT_EQ(c->min_bytes, 8);
  EXPECT_EQ(c->max_bytes, 1ll << 30);
  EXPECT_EQ(c->step_factor, 2);
  EXPECT_EQ(c->gpus_per_process, 4);
  EXPECT_EQ(c->iters, 50);
  EXPECT_EQ(c->warmup, 3);
  EXPECT_EQ(c->dtype, DataType::kBfloat16);
  EXPECT_EQ(c->op, RedOp::kMax);
  EXPECT_FALSE(c->check);
}

TEST(BenchCli, LongOptions) {
  Result<BenchConfig> c =
      Parse({"broadcast", "reduce", "--minbytes", "1K", "--maxbytes", "64M", "--root", "1",
             "--graph", "--no-check", "--json", "out.json", "--timeout", "90s", "--launcher",
             "env", "--port", "31000", "--stepfactor", "1", "--stepbytes", "4M", "--spin-up",
             "0"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->collectives,
            (std::vector<model::CommOp>{model::CommOp::kBroadcast, model::CommOp::kReduce}));
  EXPECT_EQ(c->min_bytes, 1024);
  EXPECT_EQ(c->max_bytes, 64ll << 20);
  EXPECT_EQ(c->root, 1);
  EXPECT_TRUE(c->graph);
  EXPECT_FALSE(c->check);
  EXPECT_EQ(c->json_path, "out.json");
  EXPECT_EQ(c->timeout.count(), 90000);
  EXPECT_EQ(c->spin_up.count(), 0);
  EXPECT_EQ(c->launcher, Launcher::kEnv);
  EXPECT_EQ(c->port, 31000);
  EXPECT_EQ(c->step_factor, 1);
  EXPECT_EQ(c->step_bytes, 4ll << 20);
}

TEST(BenchCli, AllMeansEveryCollective) {
  Result<BenchConfig> c = Parse({"all"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->collectives.size(), 7u);
}

TEST(BenchCli, BadValuesAreUsageErrorsNamingThem) {
  struct Case {
    std::vector<std::string> args;
    std::string mention;
  };
  for (const Case& k : std::vector<Case>{{{"all_scatter"}, "all_scatter"},
                                         {{"-e", "12Q"}, "12Q"},
                                         {{"-d", "float128"}, "float128"},
                                         {{"-o", "avg"}, "avg"},
                                         {{"--timeout", "soon"}, "soon"},
                                         {{"--spin-up", "-1s"}, "-1s"},
                                         {{"--launcher", "pigeon"}, "pigeon"},
                                         {{"-n", "0"}, "--iters"},
                                         {{"-b", "1M", "-e", "1K"}, "--maxbytes"}}) {
    Result<BenchConfig> c = Parse(k.args);
    ASSERT_FALSE(c.ok()) << k.mention;
    EXPECT_EQ(ExitCodeFor(c.status()), ExitCode::kUsage) << c.status().message();
    EXPECT_NE(c.status().message().find(k.mention), std::string::npos) << c.status().message();
  }
}

}  // namespace
}  // namespace commlens::bench
