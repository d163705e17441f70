// The CUPTI tracer's core (recorder/cupti_tracer) with a stand-in for CUPTI: activities
// delivered from another thread while the flusher drains become the rank file's records,
// strings named once and before their first use, and the file reads back through the
// native importer as the model; a tracer whose CUPTI is held by another client steps
// aside and says so; a file cut after any drain keeps every drain before it.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "importers/native/native_importer.h"
#include "native_format/format.h"
#include "native_format/record_reader.h"
#include "native_format/record_writer.h"
#include "passes/finish.h"
#include "recorder/cupti_tracer/tracer.h"
#include "recorder/recorded_trace.h"
#include "recorder/tracer_drains_file.h"

namespace commlens::recorder::cupti {
namespace {

namespace nf = native_format;

// CUPTI's part, played: |busy| says another client holds it; Deliver sends a burst of a
// step's activities from a thread of its own, as CUPTI's buffer-completed callback does.
class StandInBackend final : public ActivityBackend {
 public:
  explicit StandInBackend(bool busy = false) : busy_(busy) {}
  StartResult Start(ActivitySink* sink, std::string* why) override {
    if (busy_) {
      *why = "another CUPTI client holds CUPTI (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)";
      return StartResult::kSteppedAside;
    }
    sink_ = sink;
    return StartResult::kTracing;
  }
  void Flush() override { ++flushes; }
  void FlushAll() override {
    ++forced_flushes;
    if (held_back > 0) {
      DeliverStep(held_back);
      held_back = 0;
    }
  }
  std::atomic<int> forced_flushes{0};
  int held_back = 0;  // > 0: a step's records in a buffer only a forced flush hands over
  void Stop() override { stopped = true; }
  void SetPaused(bool p) override { pauses.push_back(p); }
  bool Held(std::string* why) override {
    if (held) return true;
    *why = "another CUPTI client subscribed (the stand-in's)";
    return false;
  }
  void LetGo() override { let_go = true; }
  bool held = true;     // false: another client subscribed since Start
  bool let_go = false;  // LetGo was called
  bool StreamId(uint64_t stream, uint32_t* id) override {
    ++stream_queries;
    if (stream == 0xdead) return false;  // a stream gone
    *id = static_cast<uint32_t>(stream & 0xff);
    return true;
  }
  int stream_queries = 0;
  // One step k: a launch call and its kernel, a copy, a range.
  void DeliverStep(int k) {
    std::thread t([this, k] {
      const int64_t base = 1'000'000 * static_cast<int64_t>(k + 1);
      nf::CudaApiRecord api{};
      api.start_ns = base, api.end_ns = base + 400, api.correlation = 100 + static_cast<uint64_t>(k), api.tid = 9;
      sink_->OnCudaApi(api, "cudaLaunchKernel");
      nf::GpuActivityRecord kernel{};
      kernel.kind = static_cast<uint8_t>(nf::GpuActivityKind::kKernel);
      kernel.start_ns = base + 1'000, kernel.end_ns = base + 50'000, kernel.correlation = api.correlation;
      kernel.stream = 7, kernel.bytes = -1;
      sink_->OnGpuActivity(kernel, "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN");
      nf::RangeRecord range{};
      range.start_ns = base, range.end_ns = base + 60'000, range.tid = 9;
      sink_->OnRange(range, "ProfilerStep#" + std::to_string(k), "");
      sink_->OnDropped(k == 2 ? 5 : 0);
    });
    t.join();
  }
  std::atomic<int> flushes{0};
  bool stopped = false;
  std::vector<bool> pauses;  // each SetPaused's argument

 private:
  bool busy_;
  ActivitySink* sink_ = nullptr;
};

std::vector<uint8_t> FileWith(const std::vector<nf::RecordWriter>& drains) { return testing::RankFileWith(drains); }

model::RankTrace Import(const std::vector<uint8_t>& bytes, const std::string& name) {
  return testing::ImportRankFile(bytes, "cupti_tracer", name);
}

TEST(CuptiTracer, DeliveredActivitiesBecomeTheRanksRecords) {
  StandInBackend backend;
  Tracer tracer(&backend);
  ASSERT_TRUE(tracer.Start());
  std::vector<nf::RecordWriter> drains(3);
  backend.DeliverStep(0);
  tracer.Drain(10, &drains[0]);
  backend.DeliverStep(1);
  backend.DeliverStep(2);
  tracer.Drain(20, &drains[1]);
  tracer.Stop();
  tracer.Drain(30, &drains[2]);  // nothing new: no records, no Tracer record
  EXPECT_TRUE(drains[2].empty());
  EXPECT_TRUE(backend.stopped);
  EXPECT_EQ(backend.flushes.load(), 2);  // each drain flushes, until stopped
  EXPECT_EQ(tracer.records(), 9u);
  EXPECT_EQ(tracer.dropped(), 5u);

  model::RankTrace t = Import(FileWith(drains), "steps.cltrace");
  ASSERT_EQ(t.gpu.size(), 3u);
  EXPECT_EQ(t.strings.Get(t.gpu.name[0]), "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN");
  EXPECT_EQ(t.gpu.cls[0], model::ActivityClass::kCompute);
  EXPECT_EQ(t.gpu.launch[1], 2'000'000);  // joined to its call by correlation id
  EXPECT_EQ(t.host.size(), 3u);
  ASSERT_EQ(t.steps.size(), 3u);
  EXPECT_EQ(t.steps[2].number, 2);
  EXPECT_EQ(t.stats.count(model::ImportIssue::kDroppedByRecorder), 5u);
}

TEST(CuptiTracer, StepsAsideWhenAnotherClientHoldsCupti) {
  StandInBackend busy(/*busy=*/true);
  Tracer tracer(&busy);
  EXPECT_FALSE(tracer.Start());
  EXPECT_FALSE(tracer.tracing());
  std::vector<nf::RecordWriter> drains(1);
  tracer.Drain(10, &drains[0]);
  EXPECT_EQ(busy.flushes.load(), 0);
  model::RankTrace t = Import(FileWith(drains), "aside.cltrace");
  EXPECT_EQ(t.gpu.size(), 0u);
  bool said = false;
  for (const std::string& n : t.notes) said |= n.find("stepped aside (another CUPTI client holds CUPTI") != std::string::npos;
  EXPECT_TRUE(said);
}

// A PyTorch profiler (or Nsight Systems) started after the tracer subscribes to CUPTI: at
// the next drain the tracer lets CUPTI go (no pause, resume or stop reaches it, which
// would switch the other client's kinds off) and says when; what it recorded before stays.
TEST(CuptiTracer, LetsCuptiGoWhenAnotherClientSubscribesLater) {
  StandInBackend backend;
  Tracer tracer(&backend);
  ASSERT_TRUE(tracer.Start());
  std::vector<nf::RecordWriter> drains(3);
  backend.DeliverStep(0);
  tracer.Drain(1'000, &drains[0]);
  backend.held = false;
  tracer.Drain(2'000, &drains[1]);
  EXPECT_FALSE(tracer.tracing());
  EXPECT_TRUE(backend.let_go);
  tracer.SetPaused(true);
  tracer.Stop();
  tracer.Drain(3'000, &drains[2]);
  EXPECT_TRUE(backend.pauses.empty());
  EXPECT_FALSE(backend.stopped);
  EXPECT_EQ(backend.flushes.load(), 1);  // the first drain's only
  model::RankTrace t = Import(FileWith(drains), "later.cltrace");
  EXPECT_EQ(t.gpu.size(), 1u);
  EXPECT_TRUE(commlens::testing::HasNote(t, "the CUPTI tracer stepped aside during the run (another CUPTI client subscribed (the "
                         "stand-in's), at 2000 ns): kernels, copies and NVTX ranges after that are missing (3 "
                         "recorded before)"));
}

// A client that takes CUPTI's buffers without subscribing: the records stop while NCCL's
// kernels go on running (the launch timer saw them end). Three drains so, and the tracer
// steps aside. In a hang nothing runs: no records and no NCCL kernel ending, and it stays.
TEST(CuptiTracer, StepsAsideWhenRecordsStopWhileNcclKernelsRun) {
  {
    StandInBackend backend;
    Tracer tracer(&backend);
    ASSERT_TRUE(tracer.Start());
    nf::RecordWriter w;
    backend.DeliverStep(0);
    tracer.Drain(1'000, &w, 10);
    for (int k = 1; k <= 5; ++k) tracer.Drain(1'000 + k, &w, 10);  // a hang: nothing runs
    EXPECT_TRUE(tracer.tracing());
    tracer.Drain(2'000, &w, 20);
    tracer.Drain(3'000, &w, 30);
    EXPECT_TRUE(tracer.tracing());
    tracer.Drain(4'000, &w, 40);
    EXPECT_FALSE(tracer.tracing());
    EXPECT_TRUE(backend.let_go);
    model::RankTrace t = Import(FileWith({w}), "stalled.cltrace");
    EXPECT_TRUE(commlens::testing::HasNote(t, "CUPTI delivered nothing for 3 flushes, a forced one too, while 30 NCCL "
                                              "kernels ran: another CUPTI client took its activity buffers, at 4000 ns"));
    EXPECT_EQ(backend.forced_flushes.load(), 1);
  }
  {
    // The records were in a buffer still being filled: the forced flush brings them, and
    // the tracer goes on.
    StandInBackend backend;
    Tracer tracer(&backend);
    ASSERT_TRUE(tracer.Start());
    nf::RecordWriter w;
    backend.DeliverStep(0);
    tracer.Drain(1'000, &w, 10);
    backend.held_back = 1;
    for (int k = 1; k <= 3; ++k) tracer.Drain(1'000 * (k + 1), &w, 10 + 10 * static_cast<uint64_t>(k));
    EXPECT_EQ(backend.forced_flushes.load(), 1);
    EXPECT_TRUE(tracer.tracing());
    EXPECT_EQ(tracer.records(), 6u);
  }
  {
    // Records keep coming: no stall, however many kernels run.
    StandInBackend backend;
    Tracer tracer(&backend);
    ASSERT_TRUE(tracer.Start());
    nf::RecordWriter w;
    for (int k = 0; k < 6; ++k) {
      backend.DeliverStep(k);
      tracer.Drain(1'000 * (k + 1), &w, 100 * static_cast<uint64_t>(k + 1));
    }
    EXPECT_TRUE(tracer.tracing());
  }
}

// The recording switched off and on (its control file, its capture window): the backend
// is paused and resumed on each change only, never before Start, after Stop, or when it
// stepped aside; a new session starts unpaused.
TEST(CuptiTracer, PausedWhileTheRecordingIsOff) {
  StandInBackend backend;
  Tracer tracer(&backend);
  tracer.SetPaused(true);  // not started: nothing to pause
  EXPECT_TRUE(backend.pauses.empty());
  ASSERT_TRUE(tracer.Start());
  tracer.SetPaused(false);  // already running
  tracer.SetPaused(true);
  tracer.SetPaused(true);
  tracer.SetPaused(false);
  EXPECT_EQ(backend.pauses, (std::vector<bool>{true, false}));
  tracer.SetPaused(true);
  tracer.Stop();
  tracer.SetPaused(false);  // stopped: stays as it was
  EXPECT_EQ(backend.pauses, (std::vector<bool>{true, false, true}));
  ASSERT_TRUE(tracer.Start());  // the next session's file
  tracer.SetPaused(true);
  EXPECT_EQ(backend.pauses, (std::vector<bool>{true, false, true, true}));

  StandInBackend busy(/*busy=*/true);
  Tracer aside(&busy);
  EXPECT_FALSE(aside.Start());
  aside.SetPaused(true);
  EXPECT_TRUE(busy.pauses.empty());
}

// Each stream NCCL launched on is named once per file (StreamId: CUPTI's id), asked of
// the backend once whether it could tell or not, and again for the next session's file;
// nothing while the tracer stepped aside.
TEST(CuptiTracer, NamesEachLaunchStreamOncePerFile) {
  StandInBackend backend;
  Tracer tracer(&backend);
  tracer.NoteLaunchStream(0x7f01);  // not started: nothing
  EXPECT_EQ(backend.stream_queries, 0);
  ASSERT_TRUE(tracer.Start());
  for (uint64_t s : {0x7f01, 0x7f02, 0x7f01, 0xdead, 0xdead, 0x7f02}) tracer.NoteLaunchStream(s);
  EXPECT_EQ(backend.stream_queries, 3);
  auto ids_in = [](const nf::RecordWriter& w) {
    std::vector<nf::StreamIdRecord> ids;
    nf::RecordReader reader(w.bytes(), 0);
    for (nf::RecordView r; reader.Next(&r) == nf::ReadStatus::kRecord;)
      if (r.type == static_cast<uint16_t>(nf::RecordType::kStreamId)) {
        EXPECT_TRUE(nf::DecodePayload(r, &ids.emplace_back()));
      }
    return ids;
  };
  nf::RecordWriter first;
  tracer.Drain(1'000, &first);
  std::vector<nf::StreamIdRecord> ids = ids_in(first);
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0].stream, 0x7f01u);
  EXPECT_EQ(ids[0].cupti_stream, 0x01u);
  EXPECT_EQ(ids[1].cupti_stream, 0x02u);
  tracer.Stop();
  ASSERT_TRUE(tracer.Start());  // a new file names its streams again
  tracer.NoteLaunchStream(0x7f01);
  nf::RecordWriter second;
  tracer.Drain(2'000, &second);
  EXPECT_EQ(ids_in(second).size(), 1u);

  StandInBackend busy(/*busy=*/true);
  Tracer aside(&busy);
  EXPECT_FALSE(aside.Start());
  aside.NoteLaunchStream(0x7f01);
  EXPECT_EQ(busy.stream_queries, 0);
}

// Strings are named once in the file, each before the first record that uses it; ids
// stay apart from the session's (below Tracer::kStringBase).
TEST(CuptiTracer, StringsOnceAndBeforeTheirUse) {
  StandInBackend backend;
  Tracer tracer(&backend);
  ASSERT_TRUE(tracer.Start());
  std::vector<nf::RecordWriter> drains(2);
  backend.DeliverStep(0);
  tracer.Drain(1, &drains[0]);
  backend.DeliverStep(1);  // the same kernel and call names
  tracer.Drain(2, &drains[1]);
  const std::vector<uint8_t> file = FileWith(drains);
  nf::FileHeader header;
  std::string why;
  ASSERT_TRUE(nf::ParseFileHeader(file, &header, &why));
  nf::RecordReader reader(file, header.header_size);
  nf::RecordView r;
  std::set<uint32_t> named;
  int kernel_names = 0;
  while (reader.Next(&r) == nf::ReadStatus::kRecord) {
    if (r.type == static_cast<uint16_t>(nf::RecordType::kString)) {
      uint32_t id;
      std::memcpy(&id, r.payload.data(), 4);
      if (id < Tracer::kStringBase) continue;  // the process record's
      EXPECT_TRUE(named.insert(id).second) << "string " << id << " named twice";
      kernel_names += std::string_view(reinterpret_cast<const char*>(r.payload.data()) + 4, r.payload.size() - 4)
                          .starts_with("nvjet");
    }
    if (r.type == static_cast<uint16_t>(nf::RecordType::kGpuActivity)) {
      nf::GpuActivityRecord g;
      ASSERT_TRUE(nf::DecodePayload(r, &g));
      EXPECT_TRUE(named.count(g.name)) << "a record names string " << g.name << " before its text";
    }
  }
  EXPECT_EQ(kernel_names, 1);
}

// A file cut after any drain (a SIGKILL between flushes) holds every drain before it.
TEST(CuptiTracer, ACutFileKeepsEveryDrainBeforeTheCut) {
  StandInBackend backend;
  Tracer tracer(&backend);
  ASSERT_TRUE(tracer.Start());
  std::vector<nf::RecordWriter> drains(3);
  for (int k = 0; k < 3; ++k) {
    backend.DeliverStep(k);
    tracer.Drain(k, &drains[static_cast<size_t>(k)]);
  }
  for (size_t kept = 1; kept <= 3; ++kept) {
    std::vector<nf::RecordWriter> part(drains.begin(), drains.begin() + static_cast<long>(kept));
    std::vector<uint8_t> bytes = FileWith(part);
    bytes.resize(bytes.size() + 7, 0xAB);  // and a torn record after it
    model::RankTrace t = Import(bytes, "cut.cltrace");
    EXPECT_EQ(t.gpu.size(), kept);
    EXPECT_EQ(t.steps.size(), kept);
  }
}

}  // namespace
}  // namespace commlens::recorder::cupti
