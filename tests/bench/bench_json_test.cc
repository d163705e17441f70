#include "bench/bench_json.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>

#include "sample_report.h"

namespace commlens::bench {
namespace {

TEST(BenchJson, RoundTripsEveryField) {
  BenchReport report = testing::SampleReport(nullptr);
  std::string text = BenchReportToJson(report);
  Result<BenchReport> back = ParseBenchReport(text, "memory");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->run, report.run);
  EXPECT_EQ(back->config, report.config);
  EXPECT_EQ(back->collectives, report.collectives);
  // Writing what was read gives the same text.
  EXPECT_EQ(BenchReportToJson(*back), text);
}

TEST(BenchJson, SelfDescribingHeader) {
  nlohmann::json j = nlohmann::json::parse(BenchReportToJson(testing::SampleReport(nullptr)));
  EXPECT_EQ(j["schema"], "commlens.bench");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["nccl"]["version"], "2.28.9");
  EXPECT_EQ(j["machine"]["nranks"], 2);
  EXPECT_EQ(j["gpus"][1]["pci_bus_id"], "0000:2A:00.0");
  EXPECT_EQ(j["args"]["collectives"][1], "alltoall");
  EXPECT_EQ(j["args"]["timeout_s"], 30.0);
  EXPECT_EQ(j["args"]["spin_up_s"], 0.3);
  EXPECT_EQ(j["collectives"][0]["results"][1]["in_place"]["wrong"], 3);
  EXPECT_TRUE(j["collectives"][1]["results"][0]["in_place"]["wrong"].is_null());
  EXPECT_EQ(j["wrong_total"], 3);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["units"]["time"], "microseconds");
}

TEST(BenchJson, ErrorsNameTheSourceAndField) {
  nlohmann::json j = nlohmann::json::parse(BenchReportToJson(testing::SampleReport(nullptr)));
  j["collectives"][0]["results"][0]["out_of_place"].erase("busbw_gbps");
  Result<BenchReport> r = ParseBenchReport(j.dump(), "run.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("run.json"), std::string::npos);
  EXPECT_NE(r.status().message().find("busbw_gbps"), std::string::npos);

  j = nlohmann::json::parse(BenchReportToJson(testing::SampleReport(nullptr)));
  j["schema_version"] = 7;
  EXPECT_NE(ParseBenchReport(j.dump(), "x").status().message().find("schema_version 7"),
            std::string::npos);
  j["schema"] = "something.else";
  EXPECT_FALSE(ParseBenchReport(j.dump(), "x").ok());
  EXPECT_FALSE(ParseBenchReport("[1, 2", "x").ok());
  // A document from before --spin-up existed reads as no spin-up.
  j = nlohmann::json::parse(BenchReportToJson(testing::SampleReport(nullptr)));
  j["args"].erase("spin_up_s");
  Result<BenchReport> old = ParseBenchReport(j.dump(), "old.json");
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ(old->config.spin_up.count(), 0);
  j = nlohmann::json::parse(BenchReportToJson(testing::SampleReport(nullptr)));
  j["machine"]["nranks"] = "two";
  EXPECT_NE(ParseBenchReport(j.dump(), "x").status().message().find("machine.nranks"),
            std::string::npos);
}

// Integers out of their field's range are errors, not casts: a float of 5e69 for a count
// was undefined behaviour inside nlohmann (found by bench_fuzzer), 2^40 for an int wrapped.
TEST(BenchJson, IntegersOutOfRangeAreErrors) {
  for (const nlohmann::json& bad : {nlohmann::json(5.12556e69), nlohmann::json(1099511627776), nlohmann::json(2.5),
                                    nlohmann::json(-1e300)}) {
    nlohmann::json j = nlohmann::json::parse(BenchReportToJson(testing::SampleReport(nullptr)));
    j["machine"]["nranks"] = bad;
    Result<BenchReport> r = ParseBenchReport(j.dump(), "x");
    ASSERT_FALSE(r.ok()) << bad.dump();
    EXPECT_NE(r.status().message().find("machine.nranks' is out of range"), std::string::npos) << r.status().message();
  }
  // A whole number written as a float reads as that number.
  nlohmann::json j = nlohmann::json::parse(BenchReportToJson(testing::SampleReport(nullptr)));
  j["machine"]["nranks"] = 4.0;
  Result<BenchReport> r = ParseBenchReport(j.dump(), "x");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->run.nranks, 4);
}

TEST(BenchJson, FileRoundTrip) {
  std::string path = (std::filesystem::temp_directory_path() / "commlens_bench_json_test.json");
  BenchReport report = testing::SampleReport(nullptr);
  ASSERT_TRUE(WriteBenchReport(report, path).ok());
  Result<BenchReport> back = ReadBenchReport(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->collectives, report.collectives);
  std::remove(path.c_str());
  EXPECT_FALSE(ReadBenchReport(path).ok());
  EXPECT_FALSE(WriteBenchReport(report, "/nonexistent-dir/x.json").ok());
}

}  // namespace
}  // namespace commlens::bench
