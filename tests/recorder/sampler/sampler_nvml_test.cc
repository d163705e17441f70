// The sampler's NVML path on a stand-in library (fake_nvml.cc: two GPUs, no NVLink), so it
// runs everywhere: every GPU gets its series, each reading's cost is reported per call,
// and a call that takes milliseconds (nvmlDeviceGetUtilizationRates on some machines) is
// read at the events rate from then on, with a note saying so.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <string>
#include <thread>

#include "importers/native/native_importer.h"
#include "recorder/sampler/sampler.h"
#include "topo/fake_machine.h"

namespace commlens::recorder::sampler {
namespace {

SamplerOptions Options(const std::string& out) {
  SamplerOptions o;
  o.output_path = out;
  o.hostname = "node1";
  o.job_id = "nvml-test";
  o.nics = false;
  o.gpus = true;
  o.nvml_library = FAKE_NVML_PATH;
  o.hz = 50;
  o.gpu_hz = 10;
  o.events_hz = 1;
  return o;
}

size_t Samples(const model::RankTrace& t, const std::string& name, const std::string& device) {
  for (const model::CounterSeries& s : t.counters)
    if (s.name == name && s.device == device) return s.time.size();
  return 0;
}

TEST(SamplerNvml, ASlowCallIsReadAtTheEventsRateAndSaid) {
  setenv("FAKE_NVML_UTILIZATION_US", "3000", 1);  // 3 ms per utilization call
  topo::testing::TempDir dir;
  const std::string path = (dir.path() / "s.cltrace").string();
  auto sampler = Sampler::Create(Options(path));
  ASSERT_TRUE(sampler.ok()) << sampler.status().message();
  (*sampler)->Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  SamplerReport r = (*sampler)->Stop();
  unsetenv("FAKE_NVML_UTILIZATION_US");
  ASSERT_EQ(r.devices, 2u);
  auto t = importers::ImportNativeTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  for (const std::string gpu : {"0", "1"}) {
    SCOPED_TRACE("GPU " + gpu);
    const size_t power = Samples(*t, "gpu.power", gpu), util = Samples(*t, "gpu.utilization", gpu);
    EXPECT_GE(power, 20u);  // 10 Hz over 2.5 s
    EXPECT_GE(util, 5u);    // the first readings, then 1 Hz
    EXPECT_LT(util, power / 2);
  }
  bool said = false, detail = false;
  for (const std::string& note : t->notes) {
    said = said || note.find("utilization call takes") != std::string::npos;
    detail = detail || (note.find("reading GPU 0 took") != std::string::npos &&
                        note.find("utilization") != std::string::npos && note.find("power") != std::string::npos);
  }
  EXPECT_TRUE(said);
  EXPECT_TRUE(detail);
  EXPECT_EQ(r.read_errors, 0u);  // a call not due is not an error
}

TEST(SamplerNvml, FastCallsAreReadAtTheGpuRate) {
  topo::testing::TempDir dir;
  const std::string path = (dir.path() / "s.cltrace").string();
  auto sampler = Sampler::Create(Options(path));
  ASSERT_TRUE(sampler.ok());
  (*sampler)->Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  (*sampler)->Stop();
  auto t = importers::ImportNativeTrace(path);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(Samples(*t, "gpu.utilization", "0"), Samples(*t, "gpu.power", "0"));
  for (const std::string& note : t->notes) EXPECT_EQ(note.find("call takes"), std::string::npos) << note;
}

}  // namespace
}  // namespace commlens::recorder::sampler
