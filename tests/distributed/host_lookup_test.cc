// analyze's hang finding without host events (distributed/host_lookup.h): a stopped rank's file is
// read again and asked at the others' moment moved back onto the file's clock. With every
// rank on its own clock (--align collectives moves the stopped rank by microseconds) the
// report must be the whole model's, word for word.
#include "distributed/host_lookup.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "importers/registry.h"
#include "importers/trace_loader.h"
#include "report/json_report.h"

namespace commlens::distributed {
namespace {

std::string Report(const std::string& sample, bool drop) {
  std::filesystem::current_path(COMMLENS_SOURCE_DIR);
  importers::LoadOptions load;
  load.align = model::AlignMode::kCollectives;
  load.drop_host_events = drop;
  auto trace = importers::LoadTrace({"examples/traces/" + sample}, load);
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  if (!trace.ok()) return {};
  analysis::AnalyzeOptions options;
  if (drop) options.doing_at = DoingAtFromFiles(*trace);
  return report::AnalyzeToJson(*trace, analysis::Analyze(*trace, options)).dump(1);
}

TEST(HostLookup, AStoppedRankOnItsOwnClockSaysWhatTheWholeModelSays) {
  for (const char* sample : {"cross-rank/hang", "cross-rank/hang/native"}) {
    SCOPED_TRACE(sample);
    const std::string whole = Report(sample, false);
    EXPECT_NE(whole.find("missing_doing"), std::string::npos);
    EXPECT_EQ(Report(sample, true), whole);
  }
}

// The lookup reads a file again each time it is asked (under --mpi, asks the process that
// imported it): asked once per missing rank the hang reports, and only for those.
TEST(HostLookup, AskedOnlyForTheMissingRanksReported) {
  std::filesystem::current_path(COMMLENS_SOURCE_DIR);
  for (const char* sample : {"cross-rank/hang", "cross-rank/hang/native"}) {
    SCOPED_TRACE(sample);
    importers::LoadOptions load;
    load.drop_host_events = true;
    auto trace = importers::LoadTrace({std::string("examples/traces/") + sample}, load);
    ASSERT_TRUE(trace.ok()) << trace.status().message();
    std::vector<int> asked;
    analysis::DoingAtLookup files = DoingAtFromFiles(*trace);
    analysis::AnalyzeOptions options;
    options.doing_at = [&](size_t r, model::TimeNs t) {
      asked.push_back(trace->ranks[r].rank);
      return files(r, t);
    };
    const analysis::JobAnalysis job = analysis::Analyze(*trace, options);
    std::vector<int> reported;
    for (const analysis::Hang& h : job.cross_rank.hangs)
      reported.insert(reported.end(), h.missing.begin(), h.missing.end());
    EXPECT_EQ(reported, std::vector<int>{1});
    EXPECT_EQ(asked, reported);
  }
}

// Without a way back to the file, a rank whose host events were dropped says nothing of
// what it did (rather than what its few kept rows would suggest).
TEST(HostLookup, WithoutTheFileTheFindingSaysNothingOfIt) {
  std::filesystem::current_path(COMMLENS_SOURCE_DIR);
  importers::LoadOptions load;
  load.drop_host_events = true;
  auto trace = importers::LoadTrace({"examples/traces/cross-rank/hang"}, load);
  ASSERT_TRUE(trace.ok());
  analysis::JobAnalysis job = analysis::Analyze(*trace, {});
  ASSERT_FALSE(job.cross_rank.hangs.empty());
  for (const analysis::Hang& h : job.cross_rank.hangs) EXPECT_TRUE(h.missing_doing.empty());
}

// A file that changed since it was imported (another decoded size) is not asked.
TEST(HostLookup, AFileThatChangedIsNotAsked) {
  const std::string path = std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/cross-rank/hang/rank1.json.gz";
  auto rank = importers::ImportFile(path);
  ASSERT_TRUE(rank.ok());
  const model::RankTrace& r = rank->front();
  const model::TimeNs t = r.host.end.empty() ? 0 : r.host.end.back();
  HostEventsAgain again;
  EXPECT_FALSE(again.DoingAt(path, 0, r.input_bytes, t).empty());
  EXPECT_TRUE(again.DoingAt(path, 0, r.input_bytes + 1, t).empty());
  EXPECT_TRUE(again.DoingAt(path, 1, r.input_bytes, t).empty());
}

}  // namespace
}  // namespace commlens::distributed
