// A node's samples file in a job folder, read by the loader with the ranks' traces (not
// in the portable build, which has no importers).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "importers/trace_loader.h"
#include "recorder/sampler/fake_nics.h"
#include "recorder/sampler/sampler.h"

namespace commlens::recorder::sampler {
namespace {

using testing::FakeNics;
using testing::FakeSamplerOptions;

// A job folder with a rank's trace and its node's samples file: the samples become the
// job's counters (not a rank), and analysis sees one rank.
TEST(SamplerOnFakeSysfs, SamplesFileBesideATraceIsTheJobsCounters) {
  FakeNics fake;
  topo::testing::TempDir out;
  std::filesystem::copy_file(std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/native/rank0.cltrace",
                             out.path() / "rank0.cltrace");
  auto sampler = Sampler::Create(FakeSamplerOptions(fake, (out.path() / "job1.node1.samples.cltrace").string()));
  ASSERT_TRUE(sampler.ok()) << sampler.status().message();
  for (int i = 1; i <= 3; ++i) {
    fake.Set(FakeNics::Efa("tx_bytes"), 1'000'000ull * i);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    (*sampler)->TickNow();
  }
  (*sampler)->Stop();
  auto trace = importers::LoadTrace({out.path().string()}, {});
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  ASSERT_EQ(trace->ranks.size(), 1u);
  EXPECT_EQ(trace->ranks[0].rank, 0);
  EXPECT_TRUE(trace->failures.empty());
  ASSERT_FALSE(trace->counters.empty());
  bool efa = false;
  for (const model::CounterSeries& c : trace->counters) {
    EXPECT_EQ(c.host, "node1");
    efa |= c.owner == model::CounterOwner::kNic && c.name == "efa.tx_bytes" && c.time.size() >= 3;
  }
  EXPECT_TRUE(efa);
}


}  // namespace
}  // namespace commlens::recorder::sampler
