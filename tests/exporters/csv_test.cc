// The CSV tables: they hold the same numbers as the analysis, one row per item, and
// parse back as CSV.
#include "exporters/csv/csv_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "importers/trace_loader.h"
#include "testing/hostile_names.h"

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
  EXPECT_EQ(files.size(), 10u);

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

  // Roles: a row per group; per step and over the summary, a row per role present, the
  // exposed share as the analysis has it.
  auto roles = ReadCsv(dir + "/group_roles.csv");
  ASSERT_EQ(roles.size(), job.roles.groups.size() + 1);
  std::set<std::string> named;
  for (size_t i = 1; i < roles.size(); ++i) named.insert(roles[i][3]);
  EXPECT_TRUE(named.count("expert") && named.count("data"));
  auto role_steps = ReadCsv(dir + "/role_steps.csv");
  const size_t present = job.roles.Present().size();
  ASSERT_EQ(role_steps.size(), 1 + present * (job.roles.steps.size() + 1));
  for (const auto& row : role_steps)
    if (row[0] == "summary" && row[1] == "expert") {
      EXPECT_NEAR(std::stod(row[6]), job.roles.summary.ExposedPct(analysis::ParallelRole::kExpert), 0.005);
    }
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

// Names that a spreadsheet would run as formulas (= + - @, tab, carriage return first):
// their cells read back as the name behind a single quote, and are quoted in the file;
// every other name and every number reads back as written.
TEST(Csv, NamesThatLookLikeFormulasAreText) {
  auto t = importers::LoadTrace({std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/ddp"}, {});
  ASSERT_TRUE(t.ok());
  const std::map<std::string, std::string> renamed = testing::GiveHostileNames(&*t);
  analysis::JobAnalysis job = analysis::Analyze(*t, {});
  std::string dir = (fs::temp_directory_path() / ("commlens_csv_hostile_" + std::to_string(::getpid()))).string();
  ASSERT_TRUE(WriteCsv(job, dir).ok());
  auto guarded = [](const std::string& name) {
    return std::string("=+-@\t\r").find(name.front()) != std::string::npos ? "'" + name : name;
  };
  std::set<std::string> names;  // every name the tables should hold, as they should hold it
  for (const auto& [old_name, name] : renamed) names.insert(guarded(name));
  for (const model::RankTrace& r : t->ranks) names.insert(guarded(r.hostname));
  for (const model::JobGroup& g : t->groups) names.insert(guarded(g.name)), names.insert(guarded(g.description));

  const std::map<std::string, std::vector<std::string>> text_columns = {
      {"ranks.csv", {"hostname"}}, {"kernels.csv", {"name"}},
      {"collectives.csv", {"group", "group_desc"}}, {"cross_rank_groups.csv", {"group", "group_desc"}}};
  size_t seen = 0;
  for (const auto& [file, columns] : text_columns) {
    auto rows = ReadCsv(dir + "/" + file);
    ASSERT_GT(rows.size(), 1u) << file;
    for (size_t c = 0; c < rows[0].size(); ++c) {
      const bool text = std::find(columns.begin(), columns.end(), rows[0][c]) != columns.end();
      for (size_t r = 1; r < rows.size(); ++r) {
        ASSERT_EQ(rows[r].size(), rows[0].size()) << file << " row " << r;
        const std::string& cell = rows[r][c];
        if (text) {
          EXPECT_TRUE(cell.empty() || std::string("=+-@\t\r").find(cell.front()) == std::string::npos)
              << file << " " << rows[0][c] << ": " << cell;
          seen += names.count(cell);
        } else if (rows[0][c] != "class" && rows[0][c] != "op" && rows[0][c] != "rank" && !cell.empty()) {
          size_t used = 0;
          (void)std::stod(cell, &used);  // a number, as written (negative ones too)
          EXPECT_EQ(used, cell.size()) << file << " " << rows[0][c] << ": " << cell;
        }
      }
    }
  }
  EXPECT_GE(seen, names.size());
  // In the file, a guarded cell is quoted: a reader that ignores quotes still sees text.
  std::ifstream in(dir + "/kernels.csv");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find(",\"'=HYPERLINK(\"\"http://evil.example\"\""), std::string::npos);
  EXPECT_NE(text.find(",\"'-2+3+cmd|' /C calc'!A0#2\","), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace commlens::exporters
