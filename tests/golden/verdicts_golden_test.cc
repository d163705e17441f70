// The verdicts a user acts on, checked on real traces as the user runs the command
// (docs/analysis.md, "Transfer bandwidth", "Clocks", "Steps", "One job", "Findings"):
// bandwidth from the transfer time against the benchmark, contention on transfers, clocks
// checked before they are compared, warm-up left out of the headline, jobs not mixed,
// missing ranks named, and no finding the cross-rank evidence contradicts.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <map>
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

// A real 2 x 2 TP x DP mesh (4 x H200): the TP all-reduces and the DP all-reduces move
// data at once on the same NVLinks. Over the transfer time, every group's collectives are
// no faster while another group's move data than alone (before, over kernel times that
// held the waits, a TP all-reduce read 11 GB/s alone and 110 overlapped).
TEST(Verdicts, ContentionOnARealMeshComparesTransfers) {
  for (const char* job : {"mesh", "mesh/native"}) {
    SCOPED_TRACE(job);
    simdjson::dom::parser parser;
    simdjson::dom::element doc = AnalyzeJson(parser, kSamples + "/" + job);
    int compared = 0;
    for (simdjson::dom::element c : simdjson::dom::array(doc["cross_rank"]["contention"])) {
      simdjson::dom::element alone = c["alone"], over = c["overlapped"];
      if (!bool(alone["enough_samples"]) || !bool(over["enough_samples"])) continue;
      SCOPED_TRACE(std::string(std::string_view(c["group"])));
      EXPECT_LE(double(over["busbw_median_gbps"]), double(alone["busbw_median_gbps"]));
      EXPECT_GT(double(alone["busbw_median_gbps"]), 150.0);  // NVLink speeds, not waits
      ++compared;
    }
    EXPECT_EQ(compared, 4);  // two TP groups, two DP groups
  }
}

// The replay's headline blames the op whose typical speed would shorten the step most.
// On the contention sample that is the DP all-reduce's kernel, which moves data slower
// only while the EP all-to-all runs beside it: the headline says the kernel is the victim
// and names the other group (tests/analysis/replay_finding_test.cc holds the cases where
// it must not). (The sample's recordings, without kernels, have no replay.)
TEST(Verdicts, AReplayedKernelSlowedByAnotherGroupIsNamedTheVictim) {
  auto replay_text = [](const std::string& job) {
    simdjson::dom::parser parser;
    simdjson::dom::element doc = AnalyzeJson(parser, kSamples + "/" + job);
    for (simdjson::dom::element f : simdjson::dom::array(doc["findings"]))
      if (std::string_view(f["rule"]) == "replay") return std::string(std::string_view(f["text"]));
    return std::string();
  };
  const std::string text = replay_text("cross-rank/contention");
  ASSERT_NE(text.find("op ncclDevKernel_AllReduce"), std::string::npos) << text;
  EXPECT_NE(text.find("the kernel is the victim"), std::string::npos) << text;
  EXPECT_NE(text.find("Most of its time is dp (group 2) all_reduce of 64 MiB-128 MiB, which moves data at"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("while ep (group 1) moves data on the same rank"), std::string::npos) << text;
}

// The Nsight sample's steps #0 (1.9 s: CUDA and NCCL start-up) and #1 (22 ms) are warm-up:
// shown in the per-step table, left out of the summary, and the headline step is the
// median of the steady ones (13.4 ms), not the mean of all (290.7 ms).
TEST(Verdicts, WarmupIsLeftOutOfTheHeadline) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc = AnalyzeJson(parser, kSamples + "/nsys-2gpu/ddp");
  simdjson::dom::element c = doc["step_choice"];
  simdjson::dom::array left = c["left_out"];
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(int64_t(left.at(0)["step"]), 0);
  EXPECT_EQ(std::string_view(left.at(0)["why"]), "warm-up");
  EXPECT_EQ(int64_t(left.at(1)["step"]), 1);
  EXPECT_NEAR(double(c["median_step_us"]), 13'460, 200);
  EXPECT_EQ(simdjson::dom::array(doc["steps"]).size(), 7u);  // every step is still shown
  // The whole window is the steady steps: the GPU is idle about a third of it, not 95%.
  for (simdjson::dom::element r : simdjson::dom::array(doc["ranks"])) EXPECT_LT(double(r["idle_pct"]), 60.0);
  testing::CliRun text = Commlens("analyze " + kSamples + "/nsys-2gpu/ddp");
  EXPECT_NE(text.out.find("median step 13.4"), std::string::npos) << text.out.substr(0, 600);
  EXPECT_NE(text.out.find("left out: warm-up"), std::string::npos);
}

// One --steps for every verb that reads traces, checked against the traces' steps.
TEST(Verdicts, StepsTheTracesLackAreUsageErrors) {
  for (const char* verb : {"analyze -q", "report -o /dev/null", "export -f perfetto -o /tmp/commlens_steps_x.json"})
    for (const char* steps : {"9", "5-7"}) {
      SCOPED_TRACE(std::string(verb) + " --steps " + steps);
      testing::CliRun run = Commlens(std::string(verb) + " " + kSamples + "/ddp --steps " + steps);
      EXPECT_EQ(run.exit_code, 64) << run.out;
      EXPECT_NE(run.out.find("they have steps 3-6"), std::string::npos) << run.out;
    }
  // A step the job has narrows the summary to it.
  simdjson::dom::parser parser;
  simdjson::dom::element doc = AnalyzeJson(parser, kSamples + "/ddp --steps 4-5");
  EXPECT_TRUE(bool(doc["step_choice"]["selected_by_user"]));
  EXPECT_EQ(simdjson::dom::array(doc["step_choice"]["summarized"]).size(), 2u);
}

// Two runs' traces in one folder are two jobs: refused, both named, nothing mixed.
TEST(Verdicts, TwoJobsInOneFolderAreRefusedWithBothNamed) {
  const std::string dir = ::testing::TempDir() + "commlens_two_jobs";
  ASSERT_EQ(testing::Shell("rm -rf " + dir + " && mkdir -p " + dir + " && cp " + kSamples + "/ddp/rank*.json.gz " + dir +
                           " && for r in 0 1 2 3; do cp " + kSamples + "/fsdp/rank$r.json.gz " + dir +
                           "/fsdp_rank$r.json.gz; done")
                .exit_code,
            0);
  testing::CliRun run = Commlens("analyze " + dir);
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("these inputs hold 2 jobs"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("job 1: 4 ranks (0-3) of world size 4"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("job 2: 4 ranks (0-3) of world size 4"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("fsdp_rank0.json.gz"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("arrives last"), std::string::npos);  // no verdict on a mixed job
  // Different world sizes: the two-GPU job beside the four-GPU one.
  testing::CliRun sizes = Commlens("analyze " + kSamples + "/ddp " + kSamples + "/cross-rank/slow-host");
  EXPECT_EQ(sizes.exit_code, 1) << sizes.out;
  EXPECT_NE(sizes.out.find("of world size 2"), std::string::npos) << sizes.out;
}

// Half a job: the missing ranks are named, and the cross-rank findings say they are partial.
TEST(Verdicts, MissingRanksAreNamed) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc =
      AnalyzeJson(parser, kSamples + "/ddp/rank0.json.gz " + kSamples + "/ddp/rank1.json.gz");
  EXPECT_EQ(int64_t(doc["world_size"]), 4);
  simdjson::dom::array missing = doc["missing_ranks"];
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(int64_t(missing.at(0)), 2);
  EXPECT_EQ(int64_t(missing.at(1)), 3);
  EXPECT_EQ(std::string_view(doc["cross_rank"]["summary"]).rfind("Partial job (2 of 4 ranks", 0), 0u);
  simdjson::dom::element first = simdjson::dom::array(doc["findings"]).at(0);
  EXPECT_EQ(std::string_view(first["rule"]), "partial_job");
  // Their collectives have no transfer time: a missing member may have come last.
  for (simdjson::dom::element b : simdjson::dom::array(doc["collectives"]["buckets"]))
    EXPECT_EQ(uint64_t(b["transfer"]["count"]), 0u);
}

// The findings agree with the cross-rank evidence on every sample: a rank a finding names
// as late is last at most of its collectives beyond chance; every cost has its unit.
TEST(Verdicts, NoFindingIsContradictedByTheCrossRankTable) {
  for (const char* job : {"ddp", "fsdp", "moe", "native", "nsys-2gpu/ddp", "nsys-2gpu/fsdp", "nsys-2gpu/moe",
                          "cross-rank/pipeline-1f1b", "cross-rank/pipeline-gpipe", "cross-rank/contention",
                          "cross-rank/slow-compute", "cross-rank/slow-host", "cross-rank/hang", "cross-rank/hang/native",
                          "cross-rank/slow-compute/native", "cross-rank/contention/native", "mesh",
                          "mesh/native"}) {
    SCOPED_TRACE(job);
    simdjson::dom::parser parser;
    simdjson::dom::element doc = AnalyzeJson(parser, kSamples + "/" + job);
    std::map<int64_t, simdjson::dom::element> stragglers;
    for (simdjson::dom::element s : simdjson::dom::array(doc["cross_rank"]["stragglers"]))
      stragglers[int64_t(s["rank"])] = s;
    for (simdjson::dom::element f : simdjson::dom::array(doc["findings"])) {
      const std::string_view rule = f["rule"], text = f["text"];
      SCOPED_TRACE(std::string(text));
      if (rule == "straggler" || rule == "compute_imbalance") {
        // "Rank N ..." names the rank; the table must have it last beyond chance.
        const size_t at = text.find("Rank ");
        ASSERT_NE(at, std::string_view::npos);
        const int64_t rank = std::stoll(std::string(text.substr(at + 5, 6)));
        ASSERT_TRUE(stragglers.count(rank));
        simdjson::dom::element s = stragglers[rank];
        EXPECT_TRUE(bool(s["consistent"]));
        EXPECT_GE(double(int64_t(s["last_arrivals"])), 1.5 * double(s["chance_arrivals"]));
      }
      if (double(f["cost_wall_us_per_step"]) > 0 && rule != "pipeline_bubble")
        EXPECT_TRUE(text.find("per step") != std::string_view::npos || text.find("over the trace") != std::string_view::npos ||
                    text.find("per rank and step") != std::string_view::npos);
      if (text.find("rank-time") != std::string_view::npos) {
        EXPECT_NE(text.find("summed"), std::string_view::npos);
      }
    }
  }
}

}  // namespace
}  // namespace commlens
