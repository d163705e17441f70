// The trace loader on the shipped real traces and on a directory of broken files: each
// bad file is reported by name, the good ranks still load.
#include <gtest/gtest.h>

#include <zlib.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "importers/kineto/kineto_importer.h"
#include "importers/registry.h"
#include "importers/trace_loader.h"

namespace commlens::importers {
namespace {

namespace fs = std::filesystem;
const std::string kDdp = std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/ddp";

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("commlens_loader_" + std::to_string(::getpid()) + "_" +
                                         std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path_ / name, std::ios::binary) << bytes;
    return (path_ / name).string();
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
  static inline int counter_ = 0;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Gunzip(const std::string& gz) {
  std::string out(64 << 20, '\0');
  z_stream zs{};
  inflateInit2(&zs, 15 + 16);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = static_cast<uInt>(gz.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  inflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  inflateEnd(&zs);
  return out;
}

TEST(TraceLoader, LoadsTheShippedDdpTraces) {
  Result<model::Trace> t = LoadTrace({kDdp}, {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->ranks.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(t->ranks[r].rank, r);
    EXPECT_EQ(t->ranks[r].world_size, 4);
    EXPECT_GT(t->ranks[r].gpu.size(), 1000u);
    EXPECT_EQ(t->ranks[r].comms.size(), 28u);
    EXPECT_EQ(t->ranks[r].steps.size(), 4u);
    EXPECT_TRUE(t->ranks[r].notes.empty());
  }
  EXPECT_TRUE(t->failures.empty());
}

TEST(TraceLoader, RankFromFileName) {
  EXPECT_EQ(RankFromFileName("/x/rank3.json.gz"), 3);
  EXPECT_EQ(RankFromFileName("rank-12.Apr_03.pt.trace.json"), 12);
  EXPECT_EQ(RankFromFileName("worker_RANK_7.json"), 7);
  EXPECT_EQ(RankFromFileName("rank_non_gpu.json"), -1);
  EXPECT_EQ(RankFromFileName("trace.json"), -1);
}

TEST(TraceLoader, BadFilesAreReportedAndTheRestLoads) {
  TempDir dir;
  std::string rank0 = Gunzip(ReadAll(kDdp + "/rank0.json.gz"));
  std::string rank1 = Gunzip(ReadAll(kDdp + "/rank1.json.gz"));
  dir.Write("a_rank0.json", rank0);
  dir.Write("b_rank0_again.json", rank0);                    // claims rank 0 too
  dir.Write("c_truncated.json", rank1.substr(0, rank1.size() / 3));
  dir.Write("d_notgzip.json.gz", "{\"traceEvents\": []}");
  dir.Write("e_garbage.json", "this is not json");           // no trace by its content: skipped, noted
  // rank 1's trace with its distributedInfo removed, named after rank 5
  std::string no_info = rank1;
  size_t at = no_info.find("\"distributedInfo\"");
  ASSERT_NE(at, std::string::npos);
  no_info.replace(at, 17, "\"distributedInfX\"");
  dir.Write("rank5.json", no_info);
  dir.Write("notes.txt", "ignored: not a trace file name");

  Result<model::Trace> t = LoadTrace({dir.path()}, {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->ranks.size(), 2u);
  EXPECT_EQ(t->ranks[0].rank, 0);
  EXPECT_EQ(t->ranks[1].rank, 5);
  ASSERT_EQ(t->ranks[1].notes.size(), 1u);
  EXPECT_NE(t->ranks[1].notes[0].find("file name"), std::string::npos);
  ASSERT_EQ(t->failures.size(), 3u);
  std::string all;
  for (const auto& f : t->failures) all += f.message + "\n";
  EXPECT_NE(all.find("b_rank0_again.json: claims rank 0"), std::string::npos) << all;
  EXPECT_NE(all.find("c_truncated.json: invalid JSON at byte"), std::string::npos) << all;
  EXPECT_NE(all.find("d_notgzip.json.gz: named .gz but is not gzip"), std::string::npos) << all;
  ASSERT_EQ(t->warnings.size(), 1u);
  EXPECT_NE(t->warnings[0].find("1 file in the input folders skipped"), std::string::npos) << t->warnings[0];
  EXPECT_NE(t->warnings[0].find("e_garbage.json"), std::string::npos) << t->warnings[0];

  LoadOptions strict;
  strict.strict = true;
  Result<model::Trace> s = LoadTrace({dir.path()}, strict);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("--strict"), std::string::npos);
}

// The JSON sniff: a trace's top-level keys, a whole first object without them, or a head
// that ends before anything can be told (kineto_sniff.cc).
TEST(KinetoSniff, TracesByTheirTopLevelKeys) {
  EXPECT_TRUE(LooksLikeKinetoTrace(Gunzip(ReadAll(kDdp + "/rank0.json.gz")).substr(0, kSniffBytes)));
  EXPECT_TRUE(LooksLikeKinetoTrace("\xEF\xBB\xBF {\"schemaVersion\": 1"));
  EXPECT_TRUE(LooksLikeKinetoTrace("{\"traceEvents\": []}"));
  EXPECT_TRUE(LooksLikeKinetoTrace("{\"otherData\": {\"a\": 1}, \"traceEvents\": [{\"ph\": \"X\"}]}"));
  EXPECT_TRUE(LooksLikeKinetoTrace("{\"schemaVersion\": 1, \"traceEvents\": [ {\"ph\""));  // truncated trace
  // A first value longer than the head: the trace keys may come after it.
  EXPECT_TRUE(LooksLikeKinetoTrace(("{\"blob\": \"" + std::string(kSniffBytes, 'x')).substr(0, kSniffBytes)));
  EXPECT_TRUE(LooksLikeKinetoTrace("{\"list\": [1, 2, 3,"));
  // Configs, step logs, JSON that is no object.
  EXPECT_FALSE(LooksLikeKinetoTrace("{\n  \"model\": \"gpt2\",\n  \"lr\": 0.0003\n}\n"));
  EXPECT_FALSE(LooksLikeKinetoTrace("{\"step\": 1, \"loss\": 2.3}\n{\"step\": 2, \"traceEvents\": 1}\n"));
  EXPECT_FALSE(LooksLikeKinetoTrace("{\"profiler\": {\"traceEvents\": true}, \"x\": \"traceEvents\"}"));
  EXPECT_FALSE(LooksLikeKinetoTrace("{\"a\": \"\\\"traceEvents\\\": \"}"));  // inside an escaped string
  EXPECT_FALSE(LooksLikeKinetoTrace("{}"));
  EXPECT_FALSE(LooksLikeKinetoTrace("[1, 2, 3]"));
  EXPECT_FALSE(LooksLikeKinetoTrace("this is not json"));
}

TEST(TraceLoader, RefusesFilesThatNeverEnd) {
  // A FIFO (or a device) given as a trace would block forever; it is refused at once,
  // named, and the other ranks still load.
  TempDir dir;
  std::string fifo = dir.path() + "/rank1.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Result<model::Trace> t = LoadTrace({kDdp + "/rank0.json.gz", fifo, "/dev/zero"}, {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->ranks.size(), 1u);
  ASSERT_EQ(t->failures.size(), 2u);
  EXPECT_NE(t->failures[0].message.find("rank1.json: is a FIFO"), std::string::npos) << t->failures[0].message;
  EXPECT_NE(t->failures[1].message.find("/dev/zero: is a device"), std::string::npos) << t->failures[1].message;
}

TEST(TraceLoader, ParseErrorsNameTheBytePosition) {
  TempDir dir;
  std::string rank0 = Gunzip(ReadAll(kDdp + "/rank0.json.gz"));
  // Cut inside a string: simdjson's first pass finds the unclosed string; the message
  // still says where it starts.
  size_t quote = rank0.find("\"name\": \"", rank0.size() / 2) + 8;  // the value's opening quote
  dir.Write("cut_in_string.json", rank0.substr(0, quote + 6));
  // A missing comma between two events on line 3.
  dir.Write("bad_token.json", "{\n\"traceEvents\": [\n{\"ph\": \"X\"} {\"ph\": \"X\"}]}");
  Result<model::Trace> t = LoadTrace({dir.path()}, {});
  ASSERT_FALSE(t.ok());
  const std::string& m = t.status().message();
  EXPECT_NE(m.find("cut_in_string.json: invalid JSON at byte " + std::to_string(quote)), std::string::npos) << m;
  EXPECT_NE(m.find("unclosed string"), std::string::npos) << m;
  EXPECT_NE(m.find("bad_token.json: invalid JSON at byte"), std::string::npos) << m;
  EXPECT_NE(m.find("(line 3, column "), std::string::npos) << m;
}

TEST(TraceLoader, EmptyAndMissingInputs) {
  TempDir dir;
  Result<model::Trace> t = LoadTrace({dir.path()}, {});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("no trace files"), std::string::npos);
  t = LoadTrace({dir.path() + "/missing"}, {});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("no such file"), std::string::npos);
  dir.Write("only_bad.json", "{");
  t = LoadTrace({dir.path()}, {});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("no trace could be loaded"), std::string::npos);
}

}  // namespace
}  // namespace commlens::importers
