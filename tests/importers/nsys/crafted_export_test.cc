// The Nsight Systems importer on exports crafted to hurt it (a real export, edited): no
// SQL the file defines is run, no table other than a plain one is read, a query cannot
// run forever, no id or time from the file sizes memory or overflows. What cannot be used
// is an error naming the file (a whole table) or a counted bad row (the rest loads).
#include <gtest/gtest.h>

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "importers/nsys/nsys_importer.h"
#include "importers/nsys/sqlite_db.h"
#include "nsys_test_util.h"

namespace commlens::importers {
namespace {

using model::ImportIssue;
using nsys_test::Exec;
using nsys_test::InChild;
using nsys_test::Inflate;
using nsys_test::kSamples;
using nsys_test::ScratchDir;

constexpr uint64_t kGiB = uint64_t{1} << 30;

class CraftedExport : public ::testing::Test {
 protected:
  ScratchDir dir;
  std::string Real() { return Inflate(kSamples + "moe/rank0.sqlite.gz", dir.path, "rank0.sqlite"); }
  model::RankTrace ImportOne(const std::string& path) {
    auto r = ImportNsysExport(path);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() && r.value().size() == 1 ? std::move(r.value()[0]) : model::RankTrace{};
  }
  std::string Refused(const std::string& path) {
    auto r = ImportNsysExport(path);
    EXPECT_FALSE(r.ok()) << path << " was read";
    const std::string msg = r.ok() ? std::string() : r.status().message();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    return msg;
  }
};

size_t Kernels(const model::RankTrace& r) {
  return std::count(r.gpu.kind.begin(), r.gpu.kind.end(), model::ActivityKind::kKernel);
}

bool HasName(const model::RankTrace& r, std::string_view name) {
  for (model::StringId id : r.gpu.name)
    if (r.strings.Get(id) == name) return true;
  return false;
}

// A view named like a table the importer reads is refused, not run.
TEST_F(CraftedExport, ViewNamedLikeATableIsRefused) {
  const std::string path = Real();
  Exec(path, "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO kernels;"
             "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT * FROM kernels WHERE rowid % 2 = 0;");
  const std::string msg = Refused(path);
  EXPECT_NE(msg.find("CUPTI_ACTIVITY_KIND_KERNEL is a view, not a table"), std::string::npos) << msg;
}

// A virtual table runs its module's code over what the file holds: refused.
TEST_F(CraftedExport, VirtualTableIsRefused) {
  const std::string path = Real();
  Exec(path, "DROP TABLE NVTX_PAYLOAD_ENUMS;"
             "CREATE VIRTUAL TABLE NVTX_PAYLOAD_ENUMS USING fts5(domainId, schemaId, size);"
             "INSERT INTO NVTX_PAYLOAD_ENUMS VALUES (1, 16777236, 4);");
  const std::string msg = Refused(path);
  EXPECT_NE(msg.find("NVTX_PAYLOAD_ENUMS is a virtual"), std::string::npos) << msg;
}

// A generated column is SQL the file defines, run for every row read: refused.
TEST_F(CraftedExport, ComputedColumnIsRefused) {
  const std::string path = Real();
  Exec(path, "ALTER TABLE StringIds RENAME TO strings;"
             "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, raw TEXT, value TEXT GENERATED ALWAYS AS (upper(raw)));"
             "INSERT INTO StringIds (id, raw) SELECT id, value FROM strings;");
  const std::string msg = Refused(path);
  EXPECT_NE(msg.find("StringIds has a computed column (value)"), std::string::npos) << msg;
}

// A value longer than the limit (16 MiB) is an error, not 16 MiB per row read.
TEST_F(CraftedExport, ValueBeyondTheLengthLimitIsAnError) {
  const std::string path = Real();
  Exec(path, "UPDATE StringIds SET value = printf('%.*c', 17000000, 'x') WHERE id = 1;");
  const std::string msg = Refused(path);
  EXPECT_NE(msg.find("too big"), std::string::npos) << msg;
}

// A query that would never end stops at the step budget (of a small file: a fraction of
// a second), and the message says the file took too long.
TEST_F(CraftedExport, EndlessQueryStopsAtTheBudget) {
  const std::string path = (dir.path / "small.sqlite").string();
  Exec(path, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);");
  auto db = nsys::Database::Open(path, "crafted.sqlite");
  ASSERT_TRUE(db.ok()) << db.status().message();
  auto s = db.value().Prepare("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c");
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto row = s.value().Next();
  ASSERT_FALSE(row.ok());
  EXPECT_NE(row.status().message().find("crafted.sqlite: took too long"), std::string::npos) << row.status().message();
}

// With no budget at all, opening the file (a few hundred steps, below the first check)
// works, and a scan of its 4,114 kernels (about 16,000 steps) does not.
TEST_F(CraftedExport, BudgetTooSmallForTheFileSaysTookTooLong) {
  const std::string path = Real();
  auto db = nsys::Database::Open(path, path, nsys::ReadBudget{0, 0});
  ASSERT_TRUE(db.ok()) << db.status().message();
  auto s = db.value().Prepare("SELECT sum(start) FROM CUPTI_ACTIVITY_KIND_KERNEL");
  ASSERT_TRUE(s.ok());
  auto row = s.value().Next();
  ASSERT_FALSE(row.ok());
  EXPECT_NE(row.status().message().find(path + ": took too long"), std::string::npos) << row.status().message();
}

// A string id of 2^31 once made a vector of 2^31 entries (16 GiB); ids far beyond the
// table's size are kept in a map, and the kernels that use them get their names.
TEST_F(CraftedExport, HugeStringIdsSizeNoVector) {
  const std::string path = Real();
  Exec(path, "INSERT INTO StringIds VALUES (2147483648, 'kernel of id 2^31'), (1000000000000000, 'kernel of id 10^15');"
             "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = 2147483648 WHERE rowid = 1;"
             "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = 1000000000000000 WHERE rowid = 2;");
  const auto out = InChild(nsys_test::AddressSpaceLimit(kGiB), [&]() -> std::string {
    auto r = ImportNsysExport(path);
    if (!r.ok()) return r.status().message();
    if (!HasName(r.value()[0], "kernel of id 2^31") || !HasName(r.value()[0], "kernel of id 10^15"))
      return "a kernel lost its name";
    return "";
  });
  EXPECT_TRUE(out.exited && out.code == 0) << (out.exited ? "exit " : "signal ") << out.code << ": " << out.message;
}

// 400 processes with a kernel each and a string table of 2 M rows: each process once
// cached the whole table (400 x 8 MB); only the first few get a vector now.
TEST_F(CraftedExport, ManyProcessesDoNotEachCopyTheStringTable) {
  const std::string path = Real();
  Exec(path, "WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n < 1999999)"
             "  INSERT INTO StringIds SELECT 100000 + n, 's' || n FROM i;"
             "CREATE TEMP TABLE one AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1;"
             "CREATE TEMP TABLE before AS SELECT max(rowid) AS m FROM CUPTI_ACTIVITY_KIND_KERNEL;"
             "WITH RECURSIVE p(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM p WHERE n < 400)"
             "  INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT one.* FROM one, p;"
             "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = (1000000 + rowid) << 24, demangledName = 2099999"
             "  WHERE rowid > (SELECT m FROM before);");
  const auto out = InChild(nsys_test::AddressSpaceLimit(3 * kGiB / 2), [&]() -> std::string {
    auto r = ImportNsysExport(path);
    if (!r.ok()) return r.status().message();
    if (r.value().size() != 401) return std::to_string(r.value().size()) + " ranks, not 401";
    if (!HasName(r.value().back(), "s1999999")) return "the last process's kernel lost its name";
    return "";
  });
  EXPECT_TRUE(out.exited && out.code == 0) << (out.exited ? "exit " : "signal ") << out.code << ": " << out.message;
}

// Times beyond +-2^62 ns, or that are not integers, are counted, not wrapped; the rest loads.
TEST_F(CraftedExport, TimesOutOfRangeAreCountedNotWrapped) {
  const std::string path = Real();
  const model::RankTrace clean = ImportOne(path);
  Exec(path, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 9223372036854775807, end = 9223372036854775807 WHERE rowid = 1;"
             "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -9223372036854775808, end = 9223372036854775807 WHERE rowid = 2;"
             "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon', end = 'later' WHERE rowid = 3;"
             "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = 4611686018427387904 WHERE rowid = 1;");
  const model::RankTrace r = ImportOne(path);
  EXPECT_EQ(Kernels(r), Kernels(clean) - 3);
  EXPECT_EQ(r.host.size(), clean.host.size() - 1);
  EXPECT_EQ(r.stats.count(ImportIssue::kMissingTime), clean.stats.count(ImportIssue::kMissingTime) + 4);
  for (size_t i = 0; i < r.gpu.size(); ++i) ASSERT_TRUE(model::TimeInRange(r.gpu.start[i]) && r.gpu.end[i] >= r.gpu.start[i]);
}

// A session start that is no Unix time is noted and left out (times stay the export's).
TEST_F(CraftedExport, SessionStartOutOfRangeIsNotAdded) {
  const std::string path = Real();
  Exec(path, "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = 9223372036854775000;");
  const model::RankTrace r = ImportOne(path);
  bool told = false;
  for (const std::string& n : r.notes) told |= n.find("is not a Unix time") != std::string::npos;
  EXPECT_TRUE(told);
  EXPECT_EQ(Kernels(r), static_cast<size_t>(nsys_test::QueryInt(path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")));
  const int64_t first = nsys_test::QueryInt(path, "SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL");
  int64_t first_read = INT64_MAX;
  for (size_t i = 0; i < r.gpu.size(); ++i)
    if (r.gpu.kind[i] == model::ActivityKind::kKernel) first_read = std::min(first_read, r.gpu.start[i]);
  EXPECT_EQ(first_read, first);
}

// A device or stream id beyond 32 bits is a bad row, not a wrapped id.
TEST_F(CraftedExport, DeviceIdBeyond32BitsIsABadRow) {
  const std::string path = Real();
  const model::RankTrace clean = ImportOne(path);
  Exec(path, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 4294967296 WHERE rowid = 1;"
             "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET streamId = -4294967296 WHERE rowid = 1;");
  const model::RankTrace r = ImportOne(path);
  EXPECT_EQ(r.gpu.size(), clean.gpu.size() - 2);
  EXPECT_EQ(r.stats.count(ImportIssue::kBadRecord), clean.stats.count(ImportIssue::kBadRecord) + 2);
}

// A payload schema of 300 entries: each NCCL range decodes every entry of its schema, so
// entries past 256 are counted and left out (decoding stays linear in the file's size).
TEST_F(CraftedExport, PayloadSchemaEntriesAreBounded) {
  const std::string path = Real();
  const model::RankTrace clean = ImportOne(path);
  Exec(path, "WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n < 299)"
             "  INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES (domainId, schemaId, idx, type, name, offset)"
             "  SELECT 1, 16777221, 100 + n, 5, 'padding ' || n, 0 FROM i;");
  const model::RankTrace r = ImportOne(path);
  EXPECT_EQ(r.stats.count(ImportIssue::kBadRecord), clean.stats.count(ImportIssue::kBadRecord) + (303 - 256));
  EXPECT_EQ(r.comms.size(), clean.comms.size());  // the all-reduce schema's own 3 entries come first
}

// A gzip bomb (150 MB of zeros in about 150 kB) stops at 100 times its size plus 64 MiB,
// and leaves nothing in TMPDIR.
TEST_F(CraftedExport, GzipBombStopsBeforeFillingTmp) {
  const std::string path = (dir.path / "bomb.sqlite.gz").string();
  gzFile out = gzopen(path.c_str(), "wb9");
  ASSERT_NE(out, nullptr);
  std::string chunk(1 << 20, '\0');
  chunk.replace(0, 16, std::string("SQLite format 3\0", 16));
  for (int i = 0; i < 150; ++i, chunk.assign(1 << 20, '\0'))
    ASSERT_EQ(gzwrite(out, chunk.data(), static_cast<unsigned>(chunk.size())), static_cast<int>(chunk.size()));
  gzclose(out);
  std::filesystem::create_directories(dir.path / "tmp");
  nsys_test::ScopedEnv tmp("TMPDIR", (dir.path / "tmp").string());
  const std::string msg = Refused(path);
  EXPECT_NE(msg.find("inflates to more than"), std::string::npos) << msg;
  EXPECT_TRUE(std::filesystem::is_empty(dir.path / "tmp"));
}

}  // namespace
}  // namespace commlens::importers
