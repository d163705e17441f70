// A byte that is not UTF-8 in a real Kineto trace (examples/traces/ddp/rank0.json.gz,
// damaged at test time): the rank still loads with every other event, the damage is
// counted as invalid_utf8 at its true offset in the decoded file, and the streaming and
// whole-document readers agree. Before, simdjson refused the whole run of events (or the
// whole document) around the byte: the rank lost every event, and the error named the
// start of the run instead of the byte.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "importers/common/chunked_source.h"
#include "importers/common/input_file.h"
#include "importers/kineto/kineto_importer.h"

namespace commlens::importers {
namespace {

using model::ImportIssue;

const std::string& Sample() {
  static const std::string text = [] {
    Result<InputFile> f = ReadInputFile(std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/ddp/rank0.json.gz");
    return f.ok() ? std::string(f->buffer.view()) : std::string();
  }();
  return text;
}

Result<model::RankTrace> Whole(std::string_view bytes) {
  Result<InputFile> f = DecodeInput(bytes, "rank0.json");
  if (!f.ok()) return f.status();
  return ImportKinetoTrace(f->buffer, "rank0.json");
}

Result<model::RankTrace> Streamed(std::string_view bytes, size_t window = size_t{2} << 20) {
  Result<ChunkedSource> source = ChunkedSource::FromMemory(bytes, "rank0.json");
  if (!source.ok()) return source.status();
  return StreamKinetoTrace(*source, "rank0.json", {.window_bytes = window});
}

// |text| with the byte at |at| replaced by |byte|.
std::string Damaged(std::string text, size_t at, char byte = '\xFF') {
  text[at] = byte;
  return text;
}

// The first kernel event's name at or after |from| (where its text starts).
size_t KernelNameAfter(const std::string& text, size_t from) {
  const std::string_view lead = R"("cat": "kernel", "name": ")";
  const size_t at = text.find(lead, from);
  return at == std::string::npos ? at : at + lead.size();
}

bool HasName(const model::RankTrace& t, std::string_view name) {
  for (size_t i = 0; i < t.gpu.size(); ++i)
    if (t.strings.Get(t.gpu.name[i]) == name) return true;
  return false;
}

// The one invalid_utf8 example of |t|, at |offset|.
void ExpectOneInvalidByteAt(const model::RankTrace& t, uint64_t offset, const char* reader) {
  SCOPED_TRACE(reader);
  EXPECT_EQ(t.stats.count(ImportIssue::kInvalidUtf8), 1u);
  ASSERT_EQ(t.stats.examples(ImportIssue::kInvalidUtf8).size(), 1u);
  EXPECT_EQ(t.stats.examples(ImportIssue::kInvalidUtf8)[0].offset, offset);
  EXPECT_NE(t.stats.examples(ImportIssue::kInvalidUtf8)[0].what.find("0xFF"), std::string::npos);
}

// Both readers, at the default window (the bad byte deep in the second run of events)
// and at a small one.
template <typename Check>
void ForEachReader(const std::string& text, Check check) {
  for (const char* reader : {"whole", "streamed", "streamed, 64 KB window"}) {
    SCOPED_TRACE(reader);
    Result<model::RankTrace> t = reader[0] == 'w' ? Whole(text)
                                 : reader[8] == ','  ? Streamed(text, 64 << 10)
                                                     : Streamed(text);
    ASSERT_TRUE(t.ok()) << t.status().message();
    check(*t, reader);
  }
}

TEST(KinetoInvalidUtf8, AKernelNameKeepsItsEventAndTheRestOfTheRank) {
  const std::string& clean = Sample();
  ASSERT_GT(clean.size(), 4u << 20);
  Result<model::RankTrace> before = Streamed(clean);
  ASSERT_TRUE(before.ok()) << before.status().message();
  EXPECT_EQ(before->stats.count(ImportIssue::kInvalidUtf8), 0u);
  // Where the issue's reporter had theirs: inside a kernel's name 2 MB into the file.
  const size_t name = KernelNameAfter(clean, 2'015'362);
  ASSERT_NE(name, std::string::npos);
  const size_t bad = name + 10;
  const std::string text = Damaged(clean, bad);
  std::string repaired_name = clean.substr(name, clean.find('"', name) - name);
  repaired_name.replace(10, 1, "\xEF\xBF\xBD");
  ForEachReader(text, [&](const model::RankTrace& t, const char* reader) {
    EXPECT_EQ(t.rank, 0);
    EXPECT_EQ(t.gpu.size(), before->gpu.size());
    EXPECT_EQ(t.host.size(), before->host.size());
    EXPECT_EQ(t.comms.size(), before->comms.size());
    EXPECT_EQ(t.stats.total(), before->stats.total() + 1);
    ExpectOneInvalidByteAt(t, bad, reader);
    EXPECT_TRUE(HasName(t, repaired_name)) << repaired_name;
  });
}

// A bad byte in an event's key: the key is unknown, so this kernel has no duration, and is
// counted as that (missing_time) besides the byte; every other event loads.
TEST(KinetoInvalidUtf8, AKeyLosesThatFieldOnly) {
  const std::string& clean = Sample();
  Result<model::RankTrace> before = Streamed(clean);
  ASSERT_TRUE(before.ok()) << before.status().message();
  const size_t name = KernelNameAfter(clean, 3'000'000);
  ASSERT_NE(name, std::string::npos);
  const size_t dur = clean.find("\"dur\"", name);
  ASSERT_NE(dur, std::string::npos);
  const size_t bad = dur + 2;  // "d\xFFr"
  const std::string text = Damaged(clean, bad);
  ForEachReader(text, [&](const model::RankTrace& t, const char* reader) {
    EXPECT_EQ(t.gpu.size() + 1, before->gpu.size());
    EXPECT_EQ(t.host.size(), before->host.size());
    EXPECT_EQ(t.stats.count(ImportIssue::kMissingTime), before->stats.count(ImportIssue::kMissingTime) + 1);
    EXPECT_EQ(t.stats.total(), before->stats.total() + 2);
    ExpectOneInvalidByteAt(t, bad, reader);
  });
}

// A bad byte in distributedInfo: the rank, its groups and every event stay; the backend's
// name has U+FFFD where the byte was.
TEST(KinetoInvalidUtf8, AMetadataValueKeepsTheRank) {
  const std::string& clean = Sample();
  Result<model::RankTrace> before = Streamed(clean);
  ASSERT_TRUE(before.ok()) << before.status().message();
  const size_t backend = clean.find(R"("backend": "nccl")");
  ASSERT_NE(backend, std::string::npos);
  const size_t bad = backend + 14;  // "nc\xFFl"
  const std::string text = Damaged(clean, bad);
  ForEachReader(text, [&](const model::RankTrace& t, const char* reader) {
    EXPECT_EQ(t.rank, 0);
    EXPECT_EQ(t.world_size, 4);
    EXPECT_EQ(t.backend, "nc\xEF\xBF\xBDl");
    EXPECT_EQ(t.groups.size(), before->groups.size());
    EXPECT_EQ(t.gpu.size(), before->gpu.size());
    ExpectOneInvalidByteAt(t, bad, reader);
  });
}

// A bad byte where JSON wants syntax (between two events) is no name to repair: the
// import fails, and the message names that byte's offset besides where the parser stopped.
TEST(KinetoInvalidUtf8, ABadByteOutsideAStringFailsNamingItsOffset) {
  const std::string& clean = Sample();
  const size_t name = KernelNameAfter(clean, 2'015'362);
  ASSERT_NE(name, std::string::npos);
  const size_t event_start = clean.rfind('{', name);
  ASSERT_NE(event_start, std::string::npos);
  // The blank before the event's '{' ("},\n  {").
  const size_t bad = event_start - 1;
  ASSERT_EQ(clean[bad], ' ');
  const std::string text = Damaged(clean, bad);
  for (const char* reader : {"whole", "streamed"}) {
    SCOPED_TRACE(reader);
    Result<model::RankTrace> t = reader[0] == 'w' ? Whole(text) : Streamed(text);
    ASSERT_FALSE(t.ok());
    const std::string& m = t.status().message();
    EXPECT_EQ(m.rfind("rank0.json: invalid JSON at byte ", 0), 0u) << m;
    EXPECT_NE(m.find("; byte " + std::to_string(bad) + ", just before it, is not UTF-8 (0xFF)"), std::string::npos)
        << m;
  }
}

}  // namespace
}  // namespace commlens::importers
