// Paraver export (src/exporters/paraver): golden checks on the shipped real traces (the
// .prv grammar, header counts, time order, every activity's name event, the .pcf and .row
// covering what the .prv uses, communication records as the matched table implies), the
// overlap rule and p2p records on a hand-built job, and output paths that cannot be written.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/analyze.h"
#include "exporters/paraver/paraver_ids.h"
#include "exporters/paraver/paraver_writer.h"
#include "importers/trace_loader.h"
#include "testing/hostile_names.h"

namespace commlens::exporters {
namespace {

namespace fs = std::filesystem;
using namespace paraver;  // NOLINT: the ids

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "commlens-paraver-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<int64_t> Fields(const std::string& line) {
  std::vector<int64_t> f;
  size_t pos = 0;
  while (pos <= line.size()) {
    size_t colon = line.find(':', pos);
    if (colon == std::string::npos) colon = line.size();
    int64_t v = 0;
    auto [p, ec] = std::from_chars(line.data() + pos, line.data() + colon, v);
    if (ec != std::errc() || p != line.data() + colon) return {};
    f.push_back(v);
    pos = colon + 1;
  }
  return f;
}

// The three files, parsed and checked against the Paraver grammar as paraver-kernel reads
// it (utils/traceparser: traceheader.h, tracebodyio_v1.cpp, pcffileparser.cpp, rowfileparser.cpp).
struct Export {
  int64_t end = 0;
  std::vector<int> threads_per_task;  // from the header
  std::vector<std::vector<int64_t>> states, events, comms;  // fields of each record
  std::vector<std::tuple<int64_t, int, int, int>> order;   // (time, type, task, thread) per record
  std::set<int> pcf_states;
  std::map<int, std::set<int64_t>> pcf_values;  // event type -> its VALUES (empty: none)
  std::vector<std::string> task_labels, thread_labels;

  int tasks() const { return static_cast<int>(threads_per_task.size()); }
  int total_threads() const {
    int n = 0;
    for (int t : threads_per_task) n += t;
    return n;
  }
};

void ParsePrv(const std::string& text, Export* e) {
  std::vector<std::string> lines = Lines(text);
  ASSERT_FALSE(lines.empty());
  static const std::regex kHeader(R"(#Paraver \(\d\d/\d\d/\d{4} at \d\d:\d\d\):(\d+)_ns:0:1:(\d+)\(([0-9:,]+)\))");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(lines[0], m, kHeader)) << lines[0];
  e->end = std::stoll(m[1]);
  std::istringstream list(m[3].str());
  for (std::string item; std::getline(list, item, ',');) {
    ASSERT_TRUE(std::regex_match(item, std::regex(R"(\d+:1)"))) << item;
    e->threads_per_task.push_back(std::stoi(item));
  }
  ASSERT_EQ(e->tasks(), std::stoi(m[2]));
  auto valid_thread = [&](int64_t task, int64_t thread) {
    return task >= 1 && task <= e->tasks() && thread >= 1 && thread <= e->threads_per_task[task - 1];
  };
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    std::vector<int64_t> f = Fields(l);
    ASSERT_GE(f.size(), 6u) << "line " << i + 1 << ": " << l;
    ASSERT_TRUE(f[1] == 0 && f[2] == 1 && valid_thread(f[3], f[4])) << l;
    ASSERT_TRUE(f[5] >= 0 && f[5] <= e->end) << l;
    if (f[0] == 1) {
      ASSERT_EQ(f.size(), 8u) << l;
      ASSERT_TRUE(f[5] < f[6] && f[6] <= e->end && f[7] >= 0 && f[7] < kStateCount) << l;
      e->states.push_back(f);
    } else if (f[0] == 2) {
      ASSERT_TRUE(f.size() >= 8 && f.size() % 2 == 0) << l;
      e->events.push_back(f);
    } else if (f[0] == 3) {
      ASSERT_EQ(f.size(), 15u) << l;
      ASSERT_TRUE(f[7] == 0 && f[8] == 1 && valid_thread(f[9], f[10])) << l;
      ASSERT_TRUE(f[6] >= 0 && f[11] >= 0 && f[12] >= 0 && f[13] >= 0) << l;
      e->comms.push_back(f);
    } else {
      FAIL() << "unknown record type: " << l;
    }
    e->order.emplace_back(f[5], static_cast<int>(f[0]), static_cast<int>(f[3]), static_cast<int>(f[4]));
  }
}

void ParsePcf(const std::string& text, Export* e) {
  enum { kNone, kStates, kEventTypes, kValues } section = kNone;
  std::vector<int> types;
  for (const std::string& l : Lines(text)) {
    if (l.empty()) continue;
    if (l == "STATES") { section = kStates; continue; }
    if (l == "EVENT_TYPE") { section = kEventTypes; types.clear(); continue; }
    if (l == "VALUES") { section = kValues; continue; }
    if (l == "DEFAULT_OPTIONS" || l == "DEFAULT_SEMANTIC" || l == "STATES_COLOR") { section = kNone; continue; }
    std::istringstream in(l);
    if (section == kStates) {
      int s = -1;
      ASSERT_TRUE(in >> s) << l;
      e->pcf_states.insert(s);
    } else if (section == kEventTypes) {
      int gradient = -1, type = -1;
      std::string label;
      ASSERT_TRUE(in >> gradient >> type >> label) << l;
      types.push_back(type);
      e->pcf_values[type];
    } else if (section == kValues) {
      int64_t v = -1;
      std::string label;
      ASSERT_TRUE(in >> v >> label) << l;
      for (int t : types) e->pcf_values[t].insert(v);
    }
  }
}

void ParseRow(const std::string& text, Export* e) {
  std::vector<std::string> lines = Lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    static const std::regex kLevel(R"(LEVEL (\w+) SIZE (\d+))");
    if (!std::regex_match(lines[i], m, kLevel)) continue;
    std::vector<std::string>* out = m[1] == "TASK" ? &e->task_labels : m[1] == "THREAD" ? &e->thread_labels : nullptr;
    int n = std::stoi(m[2]);
    ASSERT_LE(i + n, lines.size() - 1);
    for (int k = 1; k <= n; ++k)
      if (out) out->push_back(lines[i + k]);
    i += n;
  }
}

Export Read(const fs::path& prefix) {
  Export e;
  ParsePrv(ReadFile(prefix.string() + ".prv"), &e);
  ParsePcf(ReadFile(prefix.string() + ".pcf"), &e);
  ParseRow(ReadFile(prefix.string() + ".row"), &e);
  return e;
}

struct Job {
  model::Trace trace;
  analysis::JobAnalysis job;
};

Job Load(const std::string& name) {
  auto t = importers::LoadTrace({std::string(COMMLENS_SOURCE_DIR "/examples/traces/") + name}, {});
  EXPECT_TRUE(t.ok()) << t.status().message();
  Job j{std::move(t.value()), {}};
  j.job = analysis::Analyze(j.trace, {});
  return j;
}

// Threads a rank should have: its distinct (device, stream) pairs, plus one for ops with
// no GPU activity; at least one.
int ExpectedThreads(const model::RankTrace& r) {
  std::set<std::pair<int, int>> streams;
  for (size_t i = 0; i < r.gpu.size(); ++i) streams.insert({r.gpu.device[i], r.gpu.stream[i]});
  bool ops = false;
  for (size_t i = 0; i < r.comms.size(); ++i) ops |= r.comms.activity[i] == model::kNoIndex;
  return std::max<int>(1, static_cast<int>(streams.size()) + ops);
}

// Communication records the matched table implies: n - 1 per collective of n members,
// one per p2p message with both ends.
size_t ExpectedComms(const model::Trace& t) {
  size_t n = 0;
  for (size_t k = 0; k < t.matched.size(); ++k) {
    if (t.matched.kind[k] != model::MatchKind::kP2p) {
      n += t.matched.members(k) - 1;
      continue;
    }
    bool send = false, recv = false;
    for (uint32_t i = t.matched.first[k]; i < t.matched.first[k + 1]; ++i) {
      model::CommOp op = t.ranks[t.matched.rank_index[i]].comms.op[t.matched.row[i]];
      send |= op == model::CommOp::kSend;
      recv |= op == model::CommOp::kRecv;
    }
    n += send && recv;
  }
  return n;
}

bool IsNameType(int64_t type) {
  return type == kEventKernelName || type == kEventNcclName || type == kEventMemoryName || type == kEventOtherName;
}

class ParaverGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(ParaverGolden, WritesAValidTraceOfTheWholeJob) {
  Job j = Load(GetParam());
  const model::Trace& trace = j.trace;
  TempDir dir;
  const fs::path prefix = dir.path() / "job";
  Status s = WriteParaver(trace, j.job, prefix.string(), {});
  ASSERT_TRUE(s.ok()) << s.message();
  Export e = Read(prefix);
  if (HasFatalFailure()) return;

  // Header: one task per rank, one thread per stream.
  ASSERT_EQ(e.tasks(), static_cast<int>(trace.ranks.size()));
  for (size_t r = 0; r < trace.ranks.size(); ++r) EXPECT_EQ(e.threads_per_task[r], ExpectedThreads(trace.ranks[r])) << r;

  // Records in (time, record type, task, thread) order.
  EXPECT_TRUE(std::is_sorted(e.order.begin(), e.order.end()));

  // Each thread's states partition [0, end] (idle fills the gaps), and its busy time is
  // the time of its activities (no activities overlap on a stream in these traces).
  std::map<std::pair<int64_t, int64_t>, int64_t> cursor, busy;
  for (const auto& f : e.states) {
    int64_t& at = cursor[{f[3], f[4]}];
    EXPECT_EQ(f[5], at) << "gap or overlap in task " << f[3] << " thread " << f[4];
    at = f[6];
    if (f[7] != kStateIdle) busy[{f[3], f[4]}] += f[6] - f[5];
  }
  for (const auto& [thread, at] : cursor) EXPECT_EQ(at, e.end);
  int64_t busy_total = 0, activity_total = 0;
  for (const auto& [thread, t] : busy) busy_total += t;
  for (const model::RankTrace& r : trace.ranks) {
    for (size_t i = 0; i < r.gpu.size(); ++i) activity_total += r.gpu.end[i] - r.gpu.start[i];
    if (r.gpu.size() == 0)
      for (size_t i = 0; i < r.comms.size(); ++i) activity_total += r.comms.end[i] - r.comms.start[i];
  }
  EXPECT_EQ(busy_total, activity_total);

  // One name event per GPU activity (or op without one) at its begin, of the type its
  // class says; one op event per communication op.
  std::map<int64_t, size_t> begins;  // event type -> non-zero values
  for (const auto& f : e.events)
    for (size_t i = 6; i + 1 < f.size(); i += 2)
      if (f[i + 1] != 0) ++begins[f[i]];
  size_t kernels = 0, nccl = 0, memory = 0, ops = 0;
  for (const model::RankTrace& r : trace.ranks) {
    kernels += r.gpu.size();
    ops += r.comms.size();
    for (size_t i = 0; i < r.gpu.size(); ++i) {
      nccl += r.gpu.cls[i] == model::ActivityClass::kCommunication;
      memory += r.gpu.cls[i] == model::ActivityClass::kMemory;
    }
    for (size_t i = 0; i < r.comms.size(); ++i) {  // ops with no kernel show as "NCCL <op>"
      kernels += r.comms.activity[i] == model::kNoIndex;
      nccl += r.comms.activity[i] == model::kNoIndex;
    }
  }
  EXPECT_EQ(begins[kEventKernelName] + begins[kEventNcclName] + begins[kEventMemoryName] + begins[kEventOtherName], kernels);
  EXPECT_EQ(begins[kEventNcclName], nccl);
  EXPECT_EQ(begins[kEventMemoryName], memory);
  EXPECT_EQ(begins[kEventCollectiveOp], ops);

  // The .pcf names every state, event type and value the .prv uses.
  for (const auto& f : e.states) EXPECT_TRUE(e.pcf_states.count(static_cast<int>(f[7]))) << f[7];
  for (const auto& f : e.events)
    for (size_t i = 6; i + 1 < f.size(); i += 2) {
      auto type = e.pcf_values.find(static_cast<int>(f[i]));
      ASSERT_NE(type, e.pcf_values.end()) << "event type " << f[i] << " not in the .pcf";
      if (!type->second.empty()) {
        EXPECT_TRUE(type->second.count(f[i + 1])) << f[i] << ":" << f[i + 1];
      }
    }

  // The .row names every task and thread.
  ASSERT_EQ(e.task_labels.size(), trace.ranks.size());
  ASSERT_EQ(static_cast<int>(e.thread_labels.size()), e.total_threads());
  for (size_t r = 0; r < trace.ranks.size(); ++r)
    EXPECT_EQ(e.task_labels[r].rfind("rank " + std::to_string(trace.ranks[r].rank), 0), 0u) << e.task_labels[r];
  static const std::regex kThreadLabel(R"(rank \d+ (GPU \d+ stream \d+|NCCL ops))");
  for (const std::string& l : e.thread_labels) EXPECT_TRUE(std::regex_match(l, kThreadLabel)) << l;

  // Communication records: as many as the matched table implies; each leaves a thread
  // where a communication state begins, and points at one.
  EXPECT_EQ(e.comms.size(), ExpectedComms(trace));
  std::set<std::tuple<int64_t, int64_t, int64_t>> comm_begins;  // (task, thread, time)
  for (const auto& f : e.states)
    if (f[7] == kStateCommunication) comm_begins.insert({f[3], f[4], f[5]});
  for (const auto& f : e.comms) {
    EXPECT_TRUE(comm_begins.count({f[3], f[4], f[5]})) << "send not at an op's begin";
    EXPECT_TRUE(comm_begins.count({f[9], f[10], f[11]})) << "receive not at an op's begin";
    EXPECT_EQ(f[14], kTagCollective);
    EXPECT_GE(f[11], f[5]);  // the last arrival came no earlier
  }
}

INSTANTIATE_TEST_SUITE_P(Traces, ParaverGolden, ::testing::Values("ddp", "moe", "native", "fsdp"));

// Kernels, hosts and process groups named with line breaks, tabs, escape sequences and
// other control bytes: the .pcf and .row hold one label per line, printable, and still
// parse as Paraver reads them; each name is there with its control bytes as spaces.
TEST(Paraver, ControlBytesInNamesBecomeSpaces) {
  Job j = Load("ddp");
  const std::map<std::string, std::string> renamed = testing::GiveHostileNames(&j.trace);
  TempDir dir;
  const fs::path prefix = dir.path() / "job";
  Status s = WriteParaver(j.trace, j.job, prefix.string(), {});
  ASSERT_TRUE(s.ok()) << s.message();
  const std::string pcf = ReadFile(prefix.string() + ".pcf"), row = ReadFile(prefix.string() + ".row");
  for (const std::string* text : {&pcf, &row})
    for (size_t i = 0; i < text->size(); ++i) {
      const unsigned char c = static_cast<unsigned char>((*text)[i]);
      ASSERT_TRUE(c == '\n' || (c >= 0x20 && c != 0x7f))
          << (text == &pcf ? ".pcf" : ".row") << " byte " << i << " is " << int(c);
    }
  auto printable = [](std::string name) {
    for (char& c : name)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    return name;
  };
  for (const auto& [old_name, name] : renamed) EXPECT_NE(pcf.find(printable(name)), std::string::npos) << name;
  for (const model::JobGroup& g : j.trace.groups) EXPECT_NE(pcf.find(printable(g.name)), std::string::npos) << g.name;
  for (const model::RankTrace& r : j.trace.ranks) EXPECT_NE(row.find(printable(r.hostname)), std::string::npos);
  Export e = Read(prefix);
  EXPECT_EQ(e.task_labels.size(), j.trace.ranks.size());
  EXPECT_EQ(static_cast<int>(e.thread_labels.size()), e.total_threads());
}

TEST(Paraver, SameInputGivesTheSameBytes) {
  Job j = Load("moe");
  TempDir dir;
  ASSERT_TRUE(WriteParaver(j.trace, j.job, (dir.path() / "a").string(), {}).ok());
  ASSERT_TRUE(WriteParaver(j.trace, j.job, (dir.path() / "b").string(), {}).ok());
  for (const char* ext : {".prv", ".pcf", ".row"})
    EXPECT_EQ(ReadFile(dir.path() / (std::string("a") + ext)), ReadFile(dir.path() / (std::string("b") + ext))) << ext;
}

TEST(Paraver, StepsKeepTheActivitiesLaunchedInThem) {
  Job j = Load("ddp");
  TempDir dir;
  ExportOptions options;
  options.steps = {4};
  ASSERT_TRUE(WriteParaver(j.trace, j.job, (dir.path() / "s").string(), options).ok());
  Export e = Read(dir.path() / "s");
  if (HasFatalFailure()) return;
  Selection selection(j.trace, options);
  size_t kept = 0, all = 0;
  for (size_t r = 0; r < j.trace.ranks.size(); ++r)
    for (uint32_t i = 0; i < j.trace.ranks[r].gpu.size(); ++i) {
      kept += selection.Gpu(r, i);
      ++all;
    }
  size_t names = 0;
  for (const auto& f : e.events)
    for (size_t i = 6; i + 1 < f.size(); i += 2) names += IsNameType(f[i]) && f[i + 1] != 0;
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, all);
  EXPECT_EQ(names, kept);
  // One step of four: the first record is at 0, and the trace is about a quarter as long.
  EXPECT_EQ(std::get<0>(e.order.front()), 0);
  EXPECT_LT(e.end, (j.job.ranks[0].time.total.span * 2) / 3);
}

TEST(Paraver, UnwritablePathIsAnErrorNamingItAndLeavesNoFile) {
  Job j = Load("native");
  TempDir dir;
  for (const std::string& prefix : {std::string("/proc/commlens/x"), (dir.path() / "no" / "such" / "x").string()}) {
    Status s = WriteParaver(j.trace, j.job, prefix, {});
    ASSERT_FALSE(s.ok()) << prefix;
    EXPECT_NE(s.message().find(prefix), std::string::npos) << s.message();
    for (const char* ext : {".prv", ".pcf", ".row"}) EXPECT_FALSE(fs::exists(prefix + ext)) << prefix + ext;
  }
  // A folder that exists but refuses writes: nothing appears in it, not even a temporary file.
  if (::geteuid() != 0) {
    fs::path ro = dir.path() / "ro";
    fs::create_directory(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    Status s = WriteParaver(j.trace, j.job, (ro / "x").string(), {});
    EXPECT_FALSE(s.ok());
    EXPECT_TRUE(fs::is_empty(ro));
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// A hand-built job of two ranks: the overlap rule on one stream and a p2p message.
//   rank 0, stream 7: compute A [100, 400]; NCCL send B [200, 250] inside it;
//                     a zero-length memset C at 500; compute D [600, 700]
//   rank 1, stream 9: NCCL recv [220, 300]
model::Trace TwoRanks() {
  model::Trace t;
  t.groups.push_back({"0", "pp", 2, {0, 1}, 0});
  for (int r = 0; r < 2; ++r) {
    model::RankTrace rank;
    rank.rank = r;
    rank.world_size = 2;
    rank.hostname = "node" + std::to_string(r);
    model::ProcessGroup g;
    g.name = "0";
    g.description = "pp";
    g.ranks = {0, 1};
    g.size = 2;
    g.self = r;
    g.job_group = 0;
    rank.groups.push_back(g);
    t.ranks.push_back(std::move(rank));
  }
  auto gpu = [](model::RankTrace* r, const char* name, model::TimeNs s, model::TimeNs e, int stream,
                model::ActivityClass cls, model::ActivityKind kind = model::ActivityKind::kKernel) {
    uint32_t row = r->gpu.Append(s, e, r->strings.Intern(name), r->rank, stream, 0, kind);
    r->gpu.cls[row] = cls;
    return row;
  };
  auto op = [](model::RankTrace* r, uint32_t activity, model::CommOp o, int peer) {
    const model::GpuActivities& g = r->gpu;
    uint32_t c = r->comms.Append(g.start[activity], g.end[activity], o, {}, 256, 256, 1024, 0, 0, peer, activity);
    r->gpu.comm[activity] = c;
    return c;
  };
  model::RankTrace& r0 = t.ranks[0];
  gpu(&r0, "gemm_A", 100, 400, 7, model::ActivityClass::kCompute);
  uint32_t b = gpu(&r0, "ncclDevKernel_SendRecv", 200, 250, 7, model::ActivityClass::kCommunication);
  gpu(&r0, "Memset (Device)", 500, 500, 7, model::ActivityClass::kMemory, model::ActivityKind::kMemset);
  gpu(&r0, "gemm_D", 600, 700, 7, model::ActivityClass::kCompute);
  uint32_t send = op(&r0, b, model::CommOp::kSend, 1);
  model::RankTrace& r1 = t.ranks[1];
  uint32_t rb = gpu(&r1, "ncclDevKernel_SendRecv", 220, 300, 9, model::ActivityClass::kCommunication);
  uint32_t recv = op(&r1, rb, model::CommOp::kRecv, 0);

  model::MatchedOps& m = t.matched;
  m.group = {0};
  m.kind = {model::MatchKind::kP2p};
  m.seq = {0};
  m.sender = {0};
  m.receiver = {1};
  m.first = {0, 2};
  m.rank_index = {0, 1};
  m.row = {send, recv};
  m.start = {200, 220};
  m.end = {250, 300};
  return t;
}

TEST(Paraver, OverlapRuleAndP2pRecords) {
  model::Trace t = TwoRanks();
  TempDir dir;
  ASSERT_TRUE(WriteParaver(t, {}, (dir.path() / "p").string(), {}).ok());
  std::vector<std::string> lines = Lines(ReadFile(dir.path() / "p.prv"));
  // Times from the earliest timestamp (100); names are numbered in order of appearance:
  // gemm_A 1, ncclDevKernel_SendRecv 2, Memset 3, gemm_D 4.
  const std::vector<std::string> expected = {
      "1:0:1:1:1:0:100:1",  // A holds the stream
      "1:0:1:2:1:0:120:0",
      "2:0:1:1:1:0:63000006:1",
      "1:0:1:1:1:100:150:2",  // B interrupts A
      "2:0:1:1:1:100:63000006:0:63000007:2:64000001:8:64000002:1024:64000003:1:64000004:0",
      "3:0:1:1:1:100:100:0:1:2:1:120:200:1024:64002",  // send -> recv, arrived at the recv's end
      "1:0:1:2:1:120:200:2",
      "2:0:1:2:1:120:63000007:2:64000001:9:64000002:1024:64000003:1:64000004:0",
      "1:0:1:1:1:150:300:1",  // A resumes: its values again, no sequence number
      "2:0:1:1:1:150:63000007:0:64000001:0:64000002:0:64000003:0:63000006:1",
      "1:0:1:2:1:200:600:0",
      "2:0:1:2:1:200:63000007:0:64000001:0:64000002:0:64000003:0",
      "1:0:1:1:1:300:500:0",  // one idle state across the zero-length memset
      "2:0:1:1:1:300:63000006:0",
      "2:0:1:1:1:400:63000001:3:63000001:0",
      "1:0:1:1:1:500:600:1",
      "2:0:1:1:1:500:63000006:4",
      "2:0:1:1:1:600:63000006:0",
  };
  ASSERT_GE(lines.size(), 1u);
  EXPECT_EQ(lines[0].substr(lines[0].find("):")), "):600_ns:0:1:2(1:1,1:1)");
  std::vector<std::string> body(lines.begin() + 1, lines.end());
  EXPECT_EQ(body, expected);
  std::string row = ReadFile(dir.path() / "p.row");
  EXPECT_NE(row.find("LEVEL TASK SIZE 2\nrank 0 (node0)\nrank 1 (node1)\n"), std::string::npos) << row;
  EXPECT_NE(row.find("LEVEL THREAD SIZE 2\nrank 0 GPU 0 stream 7\nrank 1 GPU 1 stream 9\n"), std::string::npos) << row;
  std::string pcf = ReadFile(dir.path() / "p.pcf");
  EXPECT_NE(pcf.find("1      0 (pp)"), std::string::npos) << pcf;
}

}  // namespace
}  // namespace commlens::exporters
