// The streaming Kineto reader against the whole-document one: the same model from the
// shipped traces and from text cut at every kind of window boundary (inside strings,
// numbers, escapes; events larger than the window), in any key order, plain or gzipped;
// and the same errors, with the same byte offsets.
#include <gtest/gtest.h>

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "importers/common/chunked_source.h"
#include "importers/common/input_file.h"
#include "importers/kineto/kineto_importer.h"
#include "importers/kineto/kineto_tokenizer.h"

namespace commlens::importers {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Gzip(std::string_view text) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, text.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

Result<model::RankTrace> Whole(std::string_view bytes, const std::string& name = "t.json") {
  Result<InputFile> f = DecodeInput(bytes, name);
  if (!f.ok()) return f.status();
  return ImportKinetoTrace(f->buffer, name);
}

Result<model::RankTrace> Streamed(std::string_view bytes, size_t window, const std::string& name = "t.json") {
  Result<ChunkedSource> source = ChunkedSource::FromMemory(bytes, name);
  if (!source.ok()) return source.status();
  return StreamKinetoTrace(*source, name, {.window_bytes = window});
}

// Everything an importer writes, folded into one text (sizes, a checksum of times and
// names, metadata, counted issues with their offsets).
std::string Fingerprint(const model::RankTrace& t) {
  uint64_t sum = 0;
  auto mix = [&](uint64_t v) { sum = (sum ^ v) * 0x100000001b3ull; };
  for (size_t i = 0; i < t.gpu.size(); ++i) {
    mix(t.gpu.start[i]), mix(t.gpu.end[i]), mix(t.gpu.stream[i]), mix(t.gpu.correlation[i]), mix(t.gpu.bytes[i]);
    for (char c : t.strings.Get(t.gpu.name[i])) mix(c);
  }
  for (size_t i = 0; i < t.host.size(); ++i) {
    mix(t.host.start[i]), mix(t.host.end[i]), mix(t.host.tid[i]), mix(t.host.correlation[i]);
    for (char c : t.strings.Get(t.host.name[i])) mix(c);
  }
  for (size_t i = 0; i < t.annotations.size(); ++i) {
    mix(t.annotations.start[i]), mix(t.annotations.end[i]);
    for (char c : t.strings.Get(t.annotations.name[i])) mix(c);
  }
  for (size_t i = 0; i < t.comms.size(); ++i) mix(t.comms.start[i]), mix(t.comms.bytes[i]), mix(t.comms.group[i]);
  for (size_t i = 0; i < t.flows.size(); ++i) mix(t.flows.id[i]);
  std::string s = "gpu " + std::to_string(t.gpu.size()) + " host " + std::to_string(t.host.size()) + " ann " +
                  std::to_string(t.annotations.size()) + " comms " + std::to_string(t.comms.size()) + " flows " +
                  std::to_string(t.flows.size()) + " threads " + std::to_string(t.threads.size()) + " sum " +
                  std::to_string(sum) + " rank " + std::to_string(t.rank) + "/" + std::to_string(t.world_size) +
                  " " + t.backend + " " + t.nccl_version + " host " + t.hostname + " devices " +
                  std::to_string(t.devices.size()) + " groups " + std::to_string(t.groups.size());
  for (const auto& g : t.groups) s += " " + g.name + ":" + std::to_string(g.ranks.size());
  for (size_t k = 0; k < static_cast<size_t>(model::ImportIssue::kCount); ++k) {
    auto issue = static_cast<model::ImportIssue>(k);
    s += " i" + std::to_string(t.stats.count(issue));
    for (const auto& e : t.stats.examples(issue)) s += "@" + std::to_string(e.offset);
  }
  return s;
}

void ExpectSameModel(std::string_view bytes, size_t window, const std::string& what) {
  Result<model::RankTrace> whole = Whole(bytes);
  Result<model::RankTrace> streamed = Streamed(bytes, window);
  ASSERT_TRUE(whole.ok()) << what << ": " << whole.status().message();
  ASSERT_TRUE(streamed.ok()) << what << " window " << window << ": " << streamed.status().message();
  EXPECT_EQ(Fingerprint(*whole), Fingerprint(*streamed)) << what << " window " << window;
  EXPECT_EQ(whole->input_bytes, streamed->input_bytes) << what;
}

// Events with escapes, long names and numbers of every shape; |big| makes one event far
// larger than a small window.
std::string Sample(bool events_first, size_t big) {
  std::string events = R"("traceEvents": [
  {"ph": "X", "cat": "kernel", "name": "k \"quoted\" \\ back\\slash \u00e9 [not] {a} bracket", "pid": 0, "tid": 7, "ts": 1661203462598738.125, "dur": 2.5, "args": {"stream": 7, "correlation": 11}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 1661203462598736, "dur": 1e0, "args": {"correlation": 11}},
  {"ph": "X", "cat": "cpu_op", "name": ")" + std::string(big, 'x') + R"(", "pid": 10, "tid": 10, "ts": 1661203462598730, "dur": 20, "args": {"Input Dims": [[1, 2], [3, [4, 5]]], "s": "\\\\"}},
  42,
  {"ph": "X", "cat": "kernel", "name": "no dur", "pid": 0, "tid": 7, "ts": 1},
  {"ph": "i", "s": "t", "pid": 5, "tid": 6, "ts": 50, "name": "\\"},
  {"ph": "M", "name": "thread_name", "pid": 5, "tid": 6, "args": {"name": "python \"main\""}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 19, "ts": 140, "dur": 50,
   "args": {"device": 0, "stream": 19, "Collective name": "allreduce", "In msg nelems": 4194304, "Out msg nelems": 4194304,
            "Group size": 2, "dtype": "Float", "Process Group Name": "0", "Process Group Ranks": "[0, 1]"}}
  ])";
  std::string meta = R"("distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2,
    "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 2, "ranks": [0, 1]}], "nccl_version": "2.28.9"},
  "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150754820096, "numSms": 132}],
  "baseTimeNanoseconds": 1790857026000000000, "host_name": "node-7", "traceName": "x {[\"")";
  return events_first ? "{" + events + ",\n  " + meta + "\n}\n" : "{\n  " + meta + ",\n  " + events + "\n}";
}

TEST(KinetoStream, SameModelAtEveryWindowSize) {
  for (bool events_first : {false, true}) {
    std::string text = Sample(events_first, 300);
    for (size_t window : std::initializer_list<size_t>{64, 65, 67, 100, 128, 200, 333, 1000, 4096, 1 << 20})
      ExpectSameModel(text, window, events_first ? "events first" : "metadata first");
    // Every window size up to the whole text puts a boundary at every byte.
    for (size_t window = 64; window < 700; ++window) ExpectSameModel(text, window, "sweep");
  }
}

// Bytes that are not UTF-8 in names, keys, args and metadata, before and after the events,
// with window boundaries everywhere: the same model and the same counted offsets.
TEST(KinetoStream, BytesNotUtf8GiveTheSameModel) {
  for (bool events_first : {false, true}) {
    std::string text = Sample(events_first, 300);
    for (std::string_view mark : {R"("k \"quoted)", R"("cudaLaunchKernel")", R"("stream": 7)", R"("nccl")",
                                  R"("node-7")", R"("Input Dims")", R"(x {[)"})
      text[text.find(mark) + 2] = '\xFF';
    text.replace(text.find("python"), 2, "\xE2\x82");  // a character cut short
    Result<model::RankTrace> whole = Whole(text);
    ASSERT_TRUE(whole.ok()) << whole.status().message();
    EXPECT_EQ(whole->stats.count(model::ImportIssue::kInvalidUtf8), 8u);
    EXPECT_EQ(whole->rank, 1);
    for (size_t window = 64; window < 700; ++window) ExpectSameModel(text, window, "not UTF-8");
  }
}

// The boundary scan has two classifiers (AVX2 where the CPU has it, SSE2 otherwise):
// the portable one, forced, gives the same model at every window boundary too.
TEST(KinetoStream, PortableScanGivesTheSameModel) {
  EventScanner::UsePortableOnly(true);
  for (bool events_first : {false, true}) {
    std::string text = Sample(events_first, 300);
    for (size_t window = 64; window < 700; ++window) ExpectSameModel(text, window, "portable sweep");
  }
  ExpectSameModel(Gzip(Sample(false, 5000)), 100, "portable gzip");
  EventScanner::UsePortableOnly(false);
}

TEST(KinetoStream, KeysInAnyOrder) {
  Result<model::RankTrace> a = Streamed(Sample(false, 10), 64);
  Result<model::RankTrace> b = Streamed(Sample(true, 10), 64);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->rank, 1);
  EXPECT_EQ(b->rank, 1);
  EXPECT_EQ(b->hostname, "node-7");
  ASSERT_EQ(b->devices.size(), 1u);
  // baseTimeNanoseconds after the events still moves them onto the epoch
  EXPECT_EQ(a->gpu.start, b->gpu.start);
  EXPECT_GT(b->gpu.start[0], 1790857026000000000);
}

TEST(KinetoStream, EventsLargerThanTheWindow) {
  std::string text = Sample(false, 100000);
  ExpectSameModel(text, 64, "one 100 kB event");
  ExpectSameModel(text, 4096, "one 100 kB event");
}

TEST(KinetoStream, GzipPlainAndMultiMember) {
  std::string text = Sample(false, 5000);
  ExpectSameModel(Gzip(text), 64, "gzip");
  ExpectSameModel(Gzip(text), 1000, "gzip");
  std::string two = Gzip(text.substr(0, text.size() / 3)) + Gzip(text.substr(text.size() / 3));
  ExpectSameModel(two, 100, "two gzip members");
  Result<model::RankTrace> r = Streamed(two, 100, "t.json.gz");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->input_bytes, text.size());
}

TEST(KinetoStream, GzipErrorsNameTheFileAndOffset) {
  std::string gz = Gzip(Sample(false, 20000));
  Result<model::RankTrace> r = Streamed(gz.substr(0, gz.size() / 2), 128, "cut.json.gz");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cut.json.gz: gzip data ends early (truncated file) after " +
                                      std::to_string(gz.size() / 2) + " compressed bytes"),
            std::string::npos) << r.status().message();
  std::string corrupt = gz;
  for (size_t i = 100; i < 140; ++i) corrupt[i] = static_cast<char>(0xff);
  r = Streamed(corrupt, 128, "bad.json.gz");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad.json.gz: gzip error at compressed byte "), std::string::npos)
      << r.status().message();
  r = Streamed(Sample(false, 1), 128, "plain.json.gz");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("named .gz but is not gzip"), std::string::npos);
}

// Bytes that deflate barely shrinks: members far larger than one compressed chunk.
std::string Noise(size_t n, uint64_t seed) {
  std::string s(n, '\0');
  for (char& c : s) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    c = static_cast<char>(seed >> 56);
  }
  return s;
}

std::string ReadThrough(ChunkedSource& source, size_t piece, Status* status) {
  std::string out, buffer(piece, '\0');
  while (true) {
    Result<size_t> got = source.Read(buffer.data(), piece);
    if (!got.ok()) {
      *status = got.status();
      return out;
    }
    if (*got == 0) return out;
    out.append(buffer.data(), *got);
  }
}

// From a file, in compressed chunks: members end anywhere in a chunk, and a member's
// trailer (CRC32, length) is checked whichever engine decodes (gzip_inflater.h).
TEST(ChunkedSource, MembersAcrossChunksAndCheckedTrailers) {
  std::string a = Noise(700 << 10, 1), b = Noise(300 << 10, 2) + Sample(false, 10);
  std::string gz = Gzip(a) + Gzip(b);
  ASSERT_GT(gz.size(), 3 * ChunkedSource::kChunkBytes);
  std::string path = ::testing::TempDir() + "/members.json.gz";
  std::ofstream(path, std::ios::binary) << gz;
  for (size_t piece : {size_t{1} << 10, size_t{3} << 20}) {
    Result<ChunkedSource> source = ChunkedSource::Open(path);
    ASSERT_TRUE(source.ok()) << source.status().message();
    Status status;
    std::string out = ReadThrough(*source, piece, &status);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_TRUE(out == a + b) << "piece " << piece;
    EXPECT_EQ(source->decoded_bytes(), a.size() + b.size());
  }
  // A wrong CRC32 in the first member's trailer: an error at the trailer's offset.
  std::string bad_crc = gz;
  size_t trailer = Gzip(a).size() - 8;
  bad_crc[trailer] = static_cast<char>(bad_crc[trailer] ^ 1);
  Result<ChunkedSource> crc = ChunkedSource::FromMemory(bad_crc, "crc.json.gz");
  ASSERT_TRUE(crc.ok());
  Status status;
  ReadThrough(*crc, 1 << 16, &status);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("crc.json.gz: gzip error at compressed byte "), std::string::npos)
      << status.message();
  // Cut inside the second member's trailer: truncated, not silently short.
  Result<ChunkedSource> cut = ChunkedSource::FromMemory(std::string_view(gz).substr(0, gz.size() - 3), "cut.json.gz");
  ASSERT_TRUE(cut.ok());
  status = OkStatus();
  ReadThrough(*cut, 1 << 16, &status);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("gzip data ends early"), std::string::npos) << status.message();
}

TEST(KinetoStream, ShippedTracesGiveTheSameModel) {
  for (std::string job : {"ddp", "fsdp", "moe"}) {
    std::string dir = std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/" + job;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      std::string path = entry.path().string();
      std::string gz = ReadAll(path);
      Result<model::RankTrace> whole = Whole(gz, path);
      ASSERT_TRUE(whole.ok()) << whole.status().message();
      for (size_t window : {size_t{4096}, KinetoStreamOptions{}.window_bytes}) {
        Result<model::RankTrace> streamed = StreamKinetoTrace(path, {.window_bytes = window});
        ASSERT_TRUE(streamed.ok()) << streamed.status().message();
        EXPECT_EQ(Fingerprint(*whole), Fingerprint(*streamed)) << path << " window " << window;
        EXPECT_EQ(whole->input_bytes, streamed->input_bytes);
      }
    }
  }
}

// An error's message, from the streaming reader at |window|; the whole-document reader
// must fail too.
std::string StreamError(const std::string& text, size_t window) {
  EXPECT_FALSE(Whole(text).ok()) << text;
  Result<model::RankTrace> r = Streamed(text, window);
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "" : r.status().message();
}

TEST(KinetoStream, CutShortNamesTheByteAndLine) {
  std::string text = Sample(false, 300);
  size_t quote = text.find("\"cudaLaunchKernel\"");
  std::string line = std::to_string(1 + std::count(text.begin(), text.begin() + quote, '\n'));
  for (size_t window : std::initializer_list<size_t>{64, 100, 4096}) {
    std::string m = StreamError(text.substr(0, quote + 5), window);
    EXPECT_NE(m.find("t.json: invalid JSON at byte " + std::to_string(quote) + " (line " + line + ", column "), std::string::npos) << m;
    EXPECT_NE(m.find("unclosed string"), std::string::npos) << m;
    m = StreamError(text.substr(0, quote - 1), window);  // after "name":
    EXPECT_NE(m.find("invalid JSON at byte " + std::to_string(quote - 1)), std::string::npos) << m;
    EXPECT_NE(m.find("cut short"), std::string::npos) << m;
  }
  // Cut inside a string of the metadata, before the events
  size_t meta_quote = text.find("\"default_pg\"");
  std::string m = StreamError(text.substr(0, meta_quote + 3), 64);
  EXPECT_NE(m.find("invalid JSON at byte " + std::to_string(meta_quote) + " (line 3"), std::string::npos) << m;
}

TEST(KinetoStream, BadTokensNameTheLine) {
  std::string text = "{\n\"traceEvents\": [\n{\"ph\": \"X\"} {\"ph\": \"X\"}]}";
  for (size_t window : std::initializer_list<size_t>{64, 4096}) {
    std::string m = StreamError(text, window);
    EXPECT_NE(m.find("invalid JSON at byte"), std::string::npos) << m;
    EXPECT_NE(m.find("(line 3, column "), std::string::npos) << m;
  }
  std::string padded = "{\n\"traceEvents\": [\n" + std::string(200, ' ') + "{\"ph\": \"X\"}\n\n{\"ph\": \"X\"}]}";
  std::string m = StreamError(padded, 64);
  EXPECT_NE(m.find("(line 5, column "), std::string::npos) << m;
  m = StreamError("{\"traceEvents\": [{\"ph\": \"X\"},]}", 64);
  EXPECT_NE(m.find("invalid JSON at byte "), std::string::npos) << m;
}

TEST(KinetoStream, RejectsWhatIsNotAKinetoTrace) {
  auto message = [](const std::string& text) {
    Result<model::RankTrace> r = Streamed(text, 64);
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_NE(message("[1, 2, 3]").find("not a Kineto trace"), std::string::npos);
  EXPECT_NE(message(R"({"a": 1})").find("no \"traceEvents\""), std::string::npos);
  EXPECT_NE(message(R"({"traceEvents": 5})").find("not an array"), std::string::npos);
  EXPECT_NE(message("{\"traceEvents\": [ {\"ph\": \"X\" ").find("cut short"), std::string::npos);
  EXPECT_NE(message("not json at all").find("not JSON"), std::string::npos);
  EXPECT_NE(message("").find("not JSON"), std::string::npos);
  EXPECT_EQ(message(R"({"traceEvents": []})"), "ok");
}

TEST(KinetoTokenizer, ScanValueFindsEnds) {
  size_t quote = 0;
  std::string s = R"("a\"b\\" , {"x": ["}", 1]} , 12.5e3])";
  EXPECT_EQ(ScanValue(s.data(), 0, s.size(), &quote), 8u);
  EXPECT_EQ(ScanValue(s.data(), 11, s.size(), &quote), s.find("} ,") + 1);
  EXPECT_EQ(ScanValue(s.data(), s.find("12.5"), s.size(), &quote), s.size() - 1);
  EXPECT_EQ(ScanValue(s.data(), 0, 5, &quote), kNotFound);
  EXPECT_EQ(quote, 0u);
}

}  // namespace
}  // namespace commlens::importers
