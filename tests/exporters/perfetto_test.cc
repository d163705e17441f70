// The Perfetto (Chrome trace JSON) export on the shipped real traces: it parses back, holds
// every kernel, copy and set of the input, one process per rank, a flow per matched
// operation, the collectives' arguments; --steps selects; output failures are clean.
#include "exporters/perfetto/perfetto_writer.h"

#include <gtest/gtest.h>
#include <simdjson.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "importers/trace_loader.h"
#include "testing/hostile_names.h"

namespace commlens::exporters {
namespace {

namespace fs = std::filesystem;

struct Job {
  model::Trace trace;
};

model::Trace Load(const std::string& workload) {
  auto t = importers::LoadTrace({std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/" + workload}, {});
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(t).value();
}

std::string TempPath(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("commlens_perfetto_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Gunzip(const std::string& gz) {
  std::string out;
  z_stream zs{};
  inflateInit2(&zs, 15 + 16);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = static_cast<uInt>(gz.size());
  char buf[1 << 16];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - zs.avail_out);
  } while (rc == Z_OK);
  inflateEnd(&zs);
  return out;
}

// What the exported file holds, counted.
struct Counts {
  std::map<std::string, uint64_t> by_category;  // complete slices
  std::set<int64_t> pids_named;
  std::map<std::string, std::map<int64_t, std::string>> flows;  // cat -> id -> phases
  uint64_t comm_slices_with_args = 0;
  uint64_t waits = 0;
};

Counts Parse(const std::string& text) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS);
  Counts c;
  for (simdjson::dom::element e : doc["traceEvents"].get_array()) {
    std::string_view ph = e["ph"];
    if (ph == "X") {
      std::string_view cat = e["cat"];
      ++c.by_category[std::string(cat)];
      simdjson::dom::element args;
      if (e["args"].get(args) == simdjson::SUCCESS && args["op"].error() == simdjson::SUCCESS) {
        EXPECT_GE(int64_t(args["bytes"]), -1);
        ++c.comm_slices_with_args;
        if (args["wait_us"].error() == simdjson::SUCCESS) ++c.waits;
      }
    } else if (ph == "M") {
      if (std::string_view(e["name"]) == "process_name") c.pids_named.insert(int64_t(e["pid"]));
    } else if (ph == "s" || ph == "t" || ph == "f") {
      c.flows[std::string(std::string_view(e["cat"]))][int64_t(e["id"])] += std::string(ph);
    }
  }
  return c;
}

uint64_t CountKind(const model::Trace& t, model::ActivityKind kind) {
  uint64_t n = 0;
  for (const auto& r : t.ranks)
    for (size_t i = 0; i < r.gpu.size(); ++i) n += r.gpu.kind[i] == kind;
  return n;
}

class PerfettoGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(PerfettoGolden, HoldsEveryActivityARankPerProcessAndAFlowPerMatch) {
  model::Trace t = Load(GetParam());
  std::string path = TempPath(GetParam() + ".json");
  uint64_t events = 0;
  ASSERT_TRUE(WritePerfetto(t, path, {}, &events).ok());
  Counts c = Parse(ReadAll(path));
  EXPECT_GT(events, 0u);
  EXPECT_EQ(c.by_category["kernel"], CountKind(t, model::ActivityKind::kKernel));
  EXPECT_EQ(c.by_category["gpu_memcpy"], CountKind(t, model::ActivityKind::kMemcpy));
  EXPECT_EQ(c.by_category["gpu_memset"], CountKind(t, model::ActivityKind::kMemset));
  std::set<int64_t> ranks;
  for (const auto& r : t.ranks) ranks.insert(r.rank);
  EXPECT_EQ(c.pids_named, ranks);

  uint64_t matched = 0, comm_ops = 0;
  for (size_t k = 0; k < t.matched.size(); ++k) matched += t.matched.members(k) > 1;
  for (const auto& r : t.ranks) comm_ops += r.comms.size();
  EXPECT_EQ(c.comm_slices_with_args, comm_ops);
  EXPECT_GT(c.waits, 0u);
  ASSERT_GT(matched, 0u);
  const auto& flows = c.flows["collective"];
  EXPECT_EQ(flows.size() + c.flows["p2p"].size(), matched);
  for (const auto& [id, phases] : flows) {
    ASSERT_GE(phases.size(), 2u) << id;
    EXPECT_EQ(phases.front(), 's');
    EXPECT_EQ(phases.back(), 'f');
  }
  fs::remove(path);
}

INSTANTIATE_TEST_SUITE_P(RealTraces, PerfettoGolden, ::testing::Values("ddp", "moe", "native"));

TEST(Perfetto, GzipHoldsTheSameDocument) {
  model::Trace t = Load("ddp");
  std::string plain = TempPath("plain.json"), packed = TempPath("packed.json.gz");
  ASSERT_TRUE(WritePerfetto(t, plain, {}).ok());
  ASSERT_TRUE(WritePerfetto(t, packed, {}).ok());
  std::string gz = ReadAll(packed);
  ASSERT_GT(gz.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
  EXPECT_LT(gz.size() * 4, ReadAll(plain).size());
  EXPECT_EQ(Gunzip(gz), ReadAll(plain));
}

TEST(Perfetto, CumulativeCountersBecomeRateTracksAndGaugesStayAsSampled) {
  model::Trace t = Load("ddp");
  // A NIC's tx bytes, cumulative, 32-bit (it wraps between the third and fourth sample),
  // sampled every 100 ms: 1 MB, 2 MB, then 3 MB per interval; and a gauge.
  model::CounterSeries tx;
  tx.name = "net.tx_bytes";
  tx.unit = "bytes";
  tx.owner = model::CounterOwner::kNic;
  tx.host = "node-a";
  tx.device = "eth0";
  tx.cumulative = true;
  tx.width_bits = 32;
  const model::TimeNs t0 = t.ranks[0].gpu.start[0];
  const double wrap = 4294967296.0;
  tx.time = {t0, t0 + 100'000'000, t0 + 200'000'000, t0 + 300'000'000};
  tx.value = {wrap - 3'500'000, wrap - 2'500'000, wrap - 500'000, 2'500'000};
  model::CounterSeries power;
  power.name = "gpu.power";
  power.unit = "mW";
  power.owner = model::CounterOwner::kDevice;
  power.host = "node-a";
  power.device = "0";
  power.time = {t0, t0 + 100'000'000};
  power.value = {350000, 420000};
  t.counters = {tx, power};
  const std::string path = TempPath("counters.json");
  ASSERT_TRUE(WritePerfetto(t, path, {}).ok());
  const std::string text = ReadAll(path);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS);
  std::vector<double> rates, watts;
  for (simdjson::dom::element e : simdjson::dom::array(doc["traceEvents"])) {
    std::string_view ph;
    if (e["ph"].get(ph) != simdjson::SUCCESS || ph != "C") continue;
    const std::string_view name = e["name"];
    if (name == "eth0 net.tx_bytes rate") rates.push_back(double(e["args"]["bytes/s"]));
    if (name == "0 gpu.power") watts.push_back(double(e["args"]["mW"]));
  }
  // Three intervals (10, 20, 30 MB/s), then the track drops to zero at the last sample.
  ASSERT_EQ(rates.size(), 4u);
  EXPECT_DOUBLE_EQ(rates[0], 10e6);
  EXPECT_DOUBLE_EQ(rates[1], 20e6);
  EXPECT_DOUBLE_EQ(rates[2], 30e6);
  EXPECT_DOUBLE_EQ(rates[3], 0);
  EXPECT_EQ(watts, (std::vector<double>{350000, 420000}));
}

TEST(Perfetto, StepsSelectTheActivitiesLaunchedInThem) {
  model::Trace t = Load("ddp");
  ExportOptions one;
  one.steps = {t.ranks[0].steps[1].number};
  std::string path = TempPath("step.json");
  ASSERT_TRUE(WritePerfetto(t, path, one).ok());
  Counts c = Parse(ReadAll(path));
  uint64_t want = 0;
  Selection s(t, one);
  for (size_t r = 0; r < t.ranks.size(); ++r)
    for (uint32_t i = 0; i < t.ranks[r].gpu.size(); ++i)
      want += t.ranks[r].gpu.kind[i] == model::ActivityKind::kKernel && s.Gpu(r, i);
  EXPECT_GT(want, 0u);
  EXPECT_LT(want, CountKind(t, model::ActivityKind::kKernel));
  EXPECT_EQ(c.by_category["kernel"], want);
}

TEST(Perfetto, AllEventsAddsHostDetail) {
  model::Trace t = Load("ddp");
  std::string path = TempPath("all.json");
  ExportOptions all;
  all.all_events = true;
  ASSERT_TRUE(WritePerfetto(t, path, all).ok());
  Counts c = Parse(ReadAll(path));
  EXPECT_GT(c.by_category["cpu_op"], 0u);
  EXPECT_GT(c.by_category["cuda_runtime"], 0u);
  ASSERT_TRUE(WritePerfetto(t, path, {}).ok());
  EXPECT_EQ(Parse(ReadAll(path)).by_category["cpu_op"], 0u);
}

TEST(Perfetto, AnUnwritablePathIsAClearErrorAndLeavesNoFile) {
  model::Trace t = Load("native");
  Status s = WritePerfetto(t, "/nonexistent-commlens-dir/out.json", {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent-commlens-dir/out.json: cannot create"), std::string::npos) << s.message();
}

TEST(Perfetto, AFullDiskIsAClearErrorAndLeavesNoHalfFile) {
  // A file-size limit makes writes fail as on a full disk (EFBIG instead of ENOSPC).
  model::Trace t = Load("ddp");
  std::string path = TempPath("full.json");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{64 << 10, 64 << 10};
    setrlimit(RLIMIT_FSIZE, &limit);
    Status s = WritePerfetto(t, path, {});
    _exit(!s.ok() && s.message().find(path + ": cannot write") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(fs::exists(path));
  for (const auto& e : fs::directory_iterator(fs::path(path).parent_path()))
    EXPECT_EQ(e.path().filename().string().find("full.json.tmp"), std::string::npos) << e.path();
}

// What a valid UTF-8 reader sees of a name: each byte that is not part of a UTF-8
// character is U+FFFD (nlohmann's replace rule; the names here have no other faults).
std::string Replaced(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (c < 0x80) out += name[i];
    else out += "\xef\xbf\xbd";
  }
  return out;
}

// A kernel, host or process group named with markup, formulas, control bytes or bytes that
// are not UTF-8: the file is written, parses (simdjson checks UTF-8), and holds each name,
// the bad bytes as U+FFFD.
TEST(Perfetto, HostileNamesAreWrittenAsValidJson) {
  model::Trace t = Load("ddp");
  const std::map<std::string, std::string> renamed = testing::GiveHostileNames(&t);
  ASSERT_EQ(renamed.size(), testing::kHostileNames.size());
  const std::string path = TempPath("hostile.json");
  Status s = WritePerfetto(t, path, {});
  ASSERT_TRUE(s.ok()) << s.message();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(ReadAll(path)).get(doc), simdjson::SUCCESS);
  std::set<std::string> kernels, processes, groups;
  for (simdjson::dom::element e : doc["traceEvents"].get_array()) {
    const std::string_view ph = e["ph"];
    if (ph == "X" && std::string_view(e["cat"]) == "kernel") kernels.emplace(std::string_view(e["name"]));
    if (ph == "M" && std::string_view(e["name"]) == "process_name")
      processes.emplace(std::string_view(e["args"]["name"]));
    simdjson::dom::element args;
    std::string_view group;
    if (ph == "X" && e["args"].get(args) == simdjson::SUCCESS && args["process_group"].get(group) == simdjson::SUCCESS)
      groups.emplace(group);
  }
  for (const auto& [old_name, name] : renamed) EXPECT_TRUE(kernels.count(Replaced(name))) << name;
  for (const model::RankTrace& rank : t.ranks) {
    bool named = false;
    for (const std::string& p : processes) named |= p.find(Replaced(rank.hostname)) != std::string::npos;
    EXPECT_TRUE(named) << rank.hostname;
  }
  size_t groups_seen = 0;
  for (const model::JobGroup& g : t.groups) groups_seen += groups.count(Replaced(g.name));
  EXPECT_GT(groups_seen, 0u);
}

}  // namespace
}  // namespace commlens::exporters
