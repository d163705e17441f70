// report::WriteJson: the analyze JSON written to a stream is dump()'s text, and a string
// that is not UTF-8 costs its bad bytes (U+FFFD), not the report.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "report/json_report.h"

namespace commlens::report {
namespace {

TEST(WriteJson, WritesWhatDumpWrites) {
  const nlohmann::json doc = {{"ranks", {{{"rank", 0}, {"name", "ncclKernel_AllReduce"}}, {{"rank", 1}}}},
                              {"us", 12.5},
                              {"none", nullptr}};
  for (int indent : {-1, 0, 1, 2}) {
    std::ostringstream out;
    WriteJson(out, doc, indent);
    EXPECT_EQ(out.str(), doc.dump(indent)) << "indent " << indent;
  }
}

TEST(WriteJson, ABadByteInANameIsReplacedNotFatal) {
  const nlohmann::json doc = {{"kernel", std::string("gemm_\xff\xfe_fwd")}, {"cut", std::string("caf\xc3")}};
  EXPECT_THROW((void)doc.dump(1), nlohmann::json::type_error);
  std::ostringstream out;
  WriteJson(out, doc, 1);
  const nlohmann::json back = nlohmann::json::parse(out.str());
  EXPECT_EQ(back["kernel"], "gemm_\xef\xbf\xbd\xef\xbf\xbd_fwd");
  EXPECT_EQ(back["cut"], "caf\xef\xbf\xbd");
}

}  // namespace
}  // namespace commlens::report
