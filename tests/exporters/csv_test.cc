// The CSV tables: they hold the same numbers as the analysis, one row per item, and
// parse back as CSV.
#include "exporters/csv/csv_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "importers/trace_loader.h"

namespace commlens::exporters {
namespace {

namespace fs = std::filesystem;

// RFC 4180 rows: fields split on commas outside quotes, "" inside quotes is one quote.
std::vector<std::vector<std::string>> ReadCsv(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field), field.clear();
    } else if (c == '\n') {
      rows.back().push_back(field), field.clear();
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  rows.pop_back();  // after the last newline
  return rows;
}

TEST(Csv, TablesHoldTheAnalysisNumbers) {
  auto t = importers::LoadTrace({std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/moe"}, {});
  ASSERT_TRUE(t.ok());
  analysis::JobAnalysis job = analysis::Analyze(*t, {});
  std::string dir = (fs::temp_directory_path() / ("commlens_csv_" + std::to_string(::getpid()))).string();
  std::vector<std::string> files;
  ASSERT_TRUE(WriteCsv(job, dir, &files).ok());
  EXPECT_EQ(files.size(), 8u);

  auto ranks = ReadCsv(dir + "/ranks.csv");
  ASSERT_EQ(ranks.size(), 5u);  // header + 4 ranks
  const auto& header = ranks[0];
  size_t compute = std::find(header.begin(), header.end(), "compute_pct") - header.begin();
  ASSERT_LT(compute, header.size());
  for (size_t r = 0; r < 4; ++r) {
    ASSERT_EQ(ranks[r + 1].size(), header.size());
    EXPECT_NEAR(std::stod(ranks[r + 1][compute]), job.ranks[r].time.total.compute_pct(), 0.005);
  }

  auto kernels = ReadCsv(dir + "/kernels.csv");
  size_t all = 0;
  for (const auto& row : kernels) all += row[0] == "all";
  EXPECT_EQ(all, job.kernels.kernels.size());  // every kernel, not only the top N
  for (const auto& row : kernels) EXPECT_EQ(row.size(), kernels[0].size());  // names with commas quoted

  auto steps = ReadCsv(dir + "/steps.csv");
  size_t means = 0;
  for (const auto& row : steps) means += row[0] == "mean";
  EXPECT_EQ(means, job.steps.size());

  auto buckets = ReadCsv(dir + "/collectives.csv");
  EXPECT_EQ(buckets.size(), job.collectives.buckets.size() + 1);
  auto groups = ReadCsv(dir + "/cross_rank_groups.csv");
  EXPECT_EQ(groups.size(), job.collectives.groups.size() + 1);
  fs::remove_all(dir);
}

TEST(Csv, AFileInTheWayIsAClearError) {
  std::string path = (fs::temp_directory_path() / ("commlens_csv_file_" + std::to_string(::getpid()))).string();
  std::ofstream(path) << "x";
  analysis::JobAnalysis job;
  Status s = WriteCsv(job, path);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(path), std::string::npos);
  fs::remove(path);
}

}  // namespace
}  // namespace commlens::exporters
