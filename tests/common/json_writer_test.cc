// common/json_writer.h, the one JSON writer of every output: it writes what dump() writes,
// and a string that is not UTF-8 costs its bad bytes (U+FFFD), not the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "common/file.h"
#include "common/json_writer.h"

namespace commlens {
namespace {

const nlohmann::json kDoc = {{"ranks", {{{"rank", 0}, {"name", "ncclKernel_AllReduce"}}, {{"rank", 1}}}},
                             {"us", 12.5},
                             {"quote", "a\"b\\c\n\x01"},
                             {"none", nullptr}};

TEST(WriteJson, WritesWhatDumpWrites) {
  for (int indent : {-1, 0, 1, 2}) {
    std::ostringstream out;
    WriteJson(out, kDoc, indent);
    EXPECT_EQ(out.str(), kDoc.dump(indent)) << "indent " << indent;
    EXPECT_EQ(JsonText(kDoc, indent), kDoc.dump(indent)) << "indent " << indent;
  }
  EXPECT_EQ(JsonString("a\"b</script>\n"), nlohmann::json("a\"b</script>\n").dump());
}

TEST(WriteJson, ABadByteInANameIsReplacedNotFatal) {
  const nlohmann::json doc = {{"kernel", std::string("gemm_\xff\xfe_fwd")}, {"cut", std::string("caf\xc3")}};
  EXPECT_THROW((void)doc.dump(1), nlohmann::json::type_error);
  std::ostringstream out;
  WriteJson(out, doc, 1);
  const nlohmann::json back = nlohmann::json::parse(out.str());
  EXPECT_EQ(back["kernel"], "gemm_\xef\xbf\xbd\xef\xbf\xbd_fwd");
  EXPECT_EQ(back["cut"], "caf\xef\xbf\xbd");
  EXPECT_EQ(JsonText(doc, 1), out.str());
  EXPECT_EQ(nlohmann::json::parse(JsonString("gemm_\xff")), "gemm_\xef\xbf\xbd");
}

TEST(WriteJsonFile, WritesTheDocumentAndANewline) {
  const std::string path = std::filesystem::temp_directory_path() / ("json_writer_" + std::to_string(::getpid()));
  ASSERT_TRUE(WriteJsonFile(path, kDoc, 2).ok());
  Result<std::string> text = ReadWholeFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, kDoc.dump(2) + "\n");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace commlens
