// commlens analyze on inputs as users have them: Nsight Systems exports made without
// NVTX payloads (`nsys export` without --include-blobs=true), and trace folders that also
// hold the job's other JSON files (a config, a step log).
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "testing/cli_run.h"
#include "testing/nsys_without_blobs.h"

namespace {

namespace fs = std::filesystem;
using commlens::testing::CliRun;
using commlens::testing::Commlens;
using commlens::testing::kSamples;

// A scratch folder removed with the object.
struct Scratch {
  fs::path path = fs::temp_directory_path() / ("commlens_inputs_" + std::to_string(::getpid()) + "_" +
                                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  Scratch() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Scratch() { fs::remove_all(path); }
};

// What an analyze --json document says of the collectives: calls per op (summed over ranks
// and buckets; a batch's calls by their own op), whether every bucket's size is known, collectives matched and not.
struct Collectives {
  std::map<std::string, uint64_t> per_op;
  bool any_size_known = false;
  bool all_size_known = true;
  uint64_t matched = 0;
  uint64_t unmatched = 0;
};

Collectives Read(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  Collectives c;
  EXPECT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json.substr(0, 300);
  if (doc.is_null()) return c;
  for (simdjson::dom::element b : simdjson::dom::array(doc["collectives"]["buckets"])) {
    bool batched = false;
    EXPECT_EQ(b["batched"].get(batched), simdjson::SUCCESS);
    if (batched)
      for (auto [op, n] : simdjson::dom::object(b["batch_ops"])) c.per_op[std::string(op)] += uint64_t(n);
    else
      c.per_op[std::string(std::string_view(b["op"]))] += uint64_t(b["count"]);
    const bool known = int64_t(b["size_min_bytes"]) >= 0;
    bool said = false;
    EXPECT_EQ(b["size_known"].get(said), simdjson::SUCCESS) << "a bucket without size_known";
    EXPECT_EQ(said, known);
    c.any_size_known |= known;
    c.all_size_known &= known;
  }
  for (simdjson::dom::element g : simdjson::dom::array(doc["collectives"]["groups"])) {
    c.matched += uint64_t(g["matched"]);
    c.unmatched += uint64_t(g["unmatched"]);
  }
  return c;
}

// NCCL's collective and p2p ranges per op in an export, as Nsight's nccl_sum recipe counts
// NCCL calls: NVTX ranges of the NCCL domain by name.
std::map<std::string, uint64_t> NcclRangesPerOp(const std::string& db_path) {
  static const std::map<std::string, std::string> kOps = {
      {"ncclAllReduce", "all_reduce"}, {"ncclAllGather", "all_gather"}, {"ncclReduceScatter", "reduce_scatter"},
      {"ncclBroadcast", "broadcast"},  {"ncclReduce", "reduce"},        {"ncclAlltoAll", "all_to_all"},
      {"ncclSend", "send"},            {"ncclRecv", "recv"}};
  std::map<std::string, uint64_t> out;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db,
                               "SELECT s.value, count(*) FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId "
                               "WHERE e.domainId = (SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND "
                               "text = 'NCCL') AND e.eventType = 59 GROUP BY s.value",
                               -1, &s, nullptr),
            SQLITE_OK);
  while (sqlite3_step(s) == SQLITE_ROW) {
    auto op = kOps.find(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
    if (op != kOps.end()) out[op->second] += static_cast<uint64_t>(sqlite3_column_int64(s, 1));
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

// The 2-GPU samples exported again without payloads: every NCCL call still counts, per op
// as with payloads and as the export's NCCL ranges, with its size unknown, and the
// collectives are matched across the two ranks by their order on their stream.
class NsysWithoutBlobs : public ::testing::TestWithParam<std::string> {};

TEST_P(NsysWithoutBlobs, EveryCallCountsSizeUnknownMatchedAcrossRanks) {
  Scratch dir;
  const std::string sample = kSamples + "/nsys-2gpu/" + GetParam();
  std::map<std::string, uint64_t> ranges;
  for (const char* rank : {"rank0", "rank1"}) {
    const fs::path out = dir.path / (std::string(rank) + ".sqlite");
    ASSERT_EQ(commlens::testing::WriteExportWithoutBlobs(sample + "/" + rank + ".sqlite.gz", out), "");
    for (const auto& [op, n] : NcclRangesPerOp(out.string())) ranges[op] += n;
  }
  // --all-events: the export's every call, not only those of the steps.
  CliRun with = Commlens("analyze " + sample + " --all-events --json - 2>/dev/null");
  CliRun without = Commlens("analyze " + dir.path.string() + " --all-events --json - 2>/dev/null");
  ASSERT_EQ(with.exit_code, 0) << with.out.substr(0, 500);
  ASSERT_EQ(without.exit_code, 0) << without.out.substr(0, 500);
  const Collectives a = Read(with.out), b = Read(without.out);
  EXPECT_EQ(b.per_op, a.per_op);
  EXPECT_EQ(b.per_op, ranges);
  EXPECT_TRUE(a.all_size_known);
  EXPECT_FALSE(b.any_size_known);
  EXPECT_GT(b.matched, 10u);
  EXPECT_EQ(b.matched, a.matched);
  EXPECT_EQ(b.unmatched, 0u);

  // The text: the table has the rows, the size says unknown and why there is no bandwidth,
  // and each rank's inputs give the re-export command.
  CliRun text = Commlens("analyze " + dir.path.string());
  EXPECT_EQ(text.exit_code, 0) << text.out;
  const size_t table = text.out.find("Collectives (per process group");
  ASSERT_NE(table, std::string::npos) << text.out;
  const std::string section = text.out.substr(table, text.out.find("Cross-rank:", table) - table);
  EXPECT_NE(section.find("all_reduce"), std::string::npos) << section;
  EXPECT_NE(section.find("unknown"), std::string::npos) << section;
  EXPECT_NE(section.find("no known message size"), std::string::npos) << section;
  EXPECT_NE(text.out.find("--include-blobs=true"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Workloads, NsysWithoutBlobs, ::testing::Values("ddp", "moe"));

// An Nsight report captures the start-up too: with NVTX steps found the window is the
// steps (as for a Kineto trace's ProfilerSteps), and --all-events keeps the whole capture.
TEST(NsysWindow, StepsBoundTheWindowAllEventsKeepsEverything) {
  for (const bool all : {false, true}) {
    CliRun r = Commlens("analyze " + kSamples + "/nsys-2gpu/ddp --json -" + (all ? " --all-events" : "") + " 2>/dev/null");
    ASSERT_EQ(r.exit_code, 0) << r.out.substr(0, 500);
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS);
    for (simdjson::dom::element rank : simdjson::dom::array(doc["ranks"])) {
      EXPECT_EQ(bool(rank["window"]["filtered"]), !all);
      if (all) EXPECT_EQ(uint64_t(rank["window"]["dropped_activities"]), 0u);
      else EXPECT_GT(uint64_t(rank["window"]["dropped_activities"]), 0u);
      EXPECT_EQ(simdjson::dom::array(rank["steps"]).size(), 7u);
    }
  }
}

// A trace folder that also holds the job's other JSON files: they are skipped with one
// note naming them, and the job is analyzed as without them.
TEST(TraceFolder, OtherJsonFilesAreSkippedWithOneNote) {
  Scratch dir;
  for (const char* rank : {"rank0.json.gz", "rank1.json.gz", "rank2.json.gz", "rank3.json.gz"})
    fs::copy_file(kSamples + "/ddp/" + rank, dir.path / rank);
  std::ofstream(dir.path / "config.json") << "{\n  \"model\": \"gpt2\",\n  \"lr\": 0.0003,\n  \"dp\": 4\n}\n";
  std::ofstream(dir.path / "metrics.json") << "{\"step\": 1, \"loss\": 2.31}\n{\"step\": 2, \"loss\": 2.12}\n";
  CliRun plain = Commlens("analyze " + kSamples + "/ddp --json - 2>/dev/null");
  CliRun mixed = Commlens("analyze " + dir.path.string() + " --json - 2>/dev/null");
  ASSERT_EQ(plain.exit_code, 0);
  ASSERT_EQ(mixed.exit_code, 0) << mixed.out.substr(0, 2000);
  simdjson::dom::parser p1, p2;
  simdjson::dom::element a, b;
  ASSERT_EQ(p1.parse(plain.out).get(a), simdjson::SUCCESS);
  ASSERT_EQ(p2.parse(mixed.out).get(b), simdjson::SUCCESS);
  EXPECT_EQ(simdjson::dom::array(b["ranks"]).size(), 4u);
  EXPECT_EQ(simdjson::minify(b["collectives"]), simdjson::minify(a["collectives"]));
  EXPECT_EQ(simdjson::minify(b["ranks"]), simdjson::minify(a["ranks"]));
  simdjson::dom::array warnings = b["warnings"];
  ASSERT_EQ(warnings.size(), 1u) << simdjson::minify(warnings);
  const std::string note(std::string_view(warnings.at(0)));
  EXPECT_NE(note.find("2 files"), std::string::npos) << note;
  EXPECT_NE(note.find("config.json"), std::string::npos) << note;
  EXPECT_NE(note.find("metrics.json"), std::string::npos) << note;

  CliRun text = Commlens("analyze " + dir.path.string());
  EXPECT_EQ(text.exit_code, 0) << text.out;
  EXPECT_EQ(text.out.find("FAILED"), std::string::npos) << text.out;
}

// Named on the command line, a file that is not a trace stays an error naming it.
TEST(TraceFolder, AFileNamedThatIsNoTraceIsAnError) {
  Scratch dir;
  std::ofstream(dir.path / "config.json") << "{\"model\": \"gpt2\", \"lr\": 0.0003}\n";
  CliRun r = Commlens("analyze " + kSamples + "/ddp/rank0.json.gz " + (dir.path / "config.json").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find((dir.path / "config.json").string() + ": not a trace commlens reads"), std::string::npos)
      << r.out;
}

// A file in a folder that looks like a trace but is broken is still reported as failed.
TEST(TraceFolder, ABrokenTraceInAFolderStillFails) {
  Scratch dir;
  fs::copy_file(kSamples + "/ddp/rank0.json.gz", dir.path / "rank0.json.gz");
  std::ofstream(dir.path / "rank1.json") << "{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [ {\"ph\": \"X\", ";
  CliRun r = Commlens("analyze " + dir.path.string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("FAILED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank1.json"), std::string::npos) << r.out;
}

}  // namespace
