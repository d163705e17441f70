// The verdicts a user acts on, checked on real traces as the user runs the command
// (docs/analysis.md, "Transfer bandwidth", "Clocks", "Steps", "One job", "Findings"):
// bandwidth from the transfer time against the benchmark, contention on transfers, clocks
// checked before they are compared, warm-up left out of the headline, jobs not mixed,
// missing ranks named, and no finding the cross-rank evidence contradicts.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>

#include "testing/cli_run.h"

namespace commlens {
namespace {

using testing::Commlens;
using testing::kSamples;

const std::string kYardstick = std::string(COMMLENS_SOURCE_DIR) + "/tests/bench/data/h200x4_yardstick.json";

// analyze's JSON document, parsed.
simdjson::dom::element AnalyzeJson(simdjson::dom::parser& parser, const std::string& args) {
  testing::CliRun run = Commlens("analyze " + args + " --json - --quiet");
  EXPECT_EQ(run.exit_code, 0) << run.out.substr(0, 2000);
  static std::string keep;  // the parser's document refers to it
  keep = run.out;
  return parser.parse(keep).value();
}

// The real 4 x H200 DDP and MoE jobs move data at the fabric's speed: over the transfer
// time (after the last rank arrived) every bucket of 1 MiB or more is within 15% of what
// `commlens bench` measured at that size on the same kind of machine, while over the
// kernel time (waiting included, the only figure before) it is a fraction of it.
TEST(Verdicts, TransferBandwidthMatchesTheBenchmark) {
  for (const char* job : {"ddp", "moe"}) {
    SCOPED_TRACE(job);
    simdjson::dom::parser parser;
    simdjson::dom::element doc = AnalyzeJson(parser, kSamples + "/" + job + " --bench " + kYardstick);
    int held = 0;
    for (simdjson::dom::element b : simdjson::dom::array(doc["collectives"]["buckets"])) {
      if (int64_t(b["size_min_bytes"]) < (1 << 20)) continue;
      simdjson::dom::element t = b["transfer"];
      SCOPED_TRACE(std::string(std::string_view(b["op"])) + " " + std::to_string(int64_t(b["size_min_bytes"])));
      ASSERT_EQ(uint64_t(t["count"]), uint64_t(b["count"]));  // every op matched on every rank
      const double bench = double(t["bench_busbw_gbps"]);
      const double transfer = double(t["busbw_gbps"]);
      EXPECT_NEAR(transfer / bench, 1.0, 0.15) << transfer << " GB/s against " << bench;
      EXPECT_LT(double(b["kernel_busbw_gbps"]), 0.5 * bench);  // the waiting dominates the kernel time
      EXPECT_GT(double(t["waiting_pct"]), 50.0);
      ++held;
    }
    EXPECT_EQ(held, 2);  // ddp: 16 and 32 MiB all-reduces; moe: 16 MiB all-to-alls, 64 MiB all-reduces
    // ... and the findings say so: the network is not the bottleneck, the waiting is.
    bool waiting = false;
    for (simdjson::dom::element f : simdjson::dom::array(doc["findings"]))
      if (std::string_view(f["rule"]) == "waiting_not_network") {
        waiting = true;
        EXPECT_NE(std::string_view(f["text"]).find("The network is not the bottleneck"), std::string_view::npos);
        EXPECT_NE(std::string_view(f["text"]).find("of the benchmark's"), std::string_view::npos);
      }
    EXPECT_TRUE(waiting);
  }
}

// The text report names the two figures apart and says which one the fabric's speed is.
TEST(Verdicts, TheTextNamesKernelAndTransferBandwidthApart) {
  testing::CliRun run = Commlens("analyze " + kSamples + "/ddp --bench " + kYardstick);
  ASSERT_EQ(run.exit_code, 0);
  EXPECT_NE(run.out.find("busbw(kernel)"), std::string::npos);
  EXPECT_NE(run.out.find("busbw(xfer)"), std::string::npos);
  EXPECT_NE(run.out.find("not the fabric's speed"), std::string::npos);
}

}  // namespace
}  // namespace commlens
