#include "bench/reporter.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "sample_report.h"
#include "testing/golden_file.h"

namespace commlens::bench {
namespace {

std::string Capture(BenchReport* report) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&buffer, &size);
  *report = testing::SampleReport(f);
  std::fclose(f);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

TEST(Reporter, TableMatchesGolden) {
  BenchReport report;
  std::string text = Capture(&report);
  commlens::testing::ExpectMatchesGoldenFile(std::string(COMMLENS_SOURCE_DIR) + "/tests/bench/golden/table.txt", text);
}

TEST(Reporter, KeepsWhatItPrinted) {
  BenchReport report;
  Capture(&report);
  ASSERT_EQ(report.collectives.size(), 2u);
  const CollectiveResult& ar = report.collectives[0];
  EXPECT_EQ(ar.name, "all_reduce");
  EXPECT_EQ(ar.redop, "sum");
  EXPECT_EQ(ar.root, -1);
  EXPECT_DOUBLE_EQ(ar.busbw_factor, 1.0);  // 2(n-1)/n with n = 2
  ASSERT_EQ(ar.rows.size(), 2u);
  EXPECT_EQ(ar.summary.wrong, 3);
  EXPECT_DOUBLE_EQ(ar.summary.peak_busbw_gbps, 41.12);
  EXPECT_EQ(report.collectives[1].comm_op, "all_to_all");
  EXPECT_EQ(report.collectives[1].redop, "none");
  EXPECT_EQ(report.WrongTotal(), 3);
}

TEST(Reporter, SilentReporterStillRecords) {
  Reporter quiet(nullptr);
  quiet.BeginRun(testing::SampleRun(), testing::SampleConfig());
  quiet.BeginCollective(*FindCollective("broadcast"), testing::SampleConfig(), 2);
  quiet.EndCollective();
  EXPECT_EQ(quiet.report().collectives.at(0).root, 0);
}

TEST(Reporter, RowColumnsLineUpWithTheHeader) {
  CollectiveResult c;
  c.name = "all_reduce";
  c.comm_op = "all_reduce";
  c.dtype = "float";
  c.redop = "sum";
  c.root = -1;
  std::string header = FormatTableHeader(c, 4);
  SizeResult row{1024, 256, 1024, 1024, testing::Placement(12.34, 0.08, 0.12, 0, 12, 13),
                 testing::Placement(12.34, 0.08, 0.12, 0, 12, 13)};
  std::string line = FormatRow(c, row);
  // The last header line ends where the row ends.
  size_t last = header.rfind('\n', header.size() - 2);
  std::string units = header.substr(last + 1);
  EXPECT_EQ(units.size(), line.size());
}

}  // namespace
}  // namespace commlens::bench
