// The CUPTI tracer's tests (cupti_tracer_test, cupti_gpu_test): what the tracer drained,
// written as a rank's file the way the recording session writes one (a header, the host
// name, a Process record, then the drains in order), and read back as the model.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "importers/native/native_importer.h"
#include "native_format/format.h"
#include "native_format/record_writer.h"
#include "passes/finish.h"

namespace commlens::recorder::cupti::testing {

inline std::vector<uint8_t> RankFileWith(const std::vector<native_format::RecordWriter>& drains) {
  namespace nf = native_format;
  nf::RecordWriter w;
  w.AppendFileHeader();
  w.AppendString(1, "node1");
  nf::ProcessRecord p{};
  p.pid = 55, p.global_rank = 0, p.world_size = 1, p.hostname = 1;
  w.Append(nf::RecordType::kProcess, p);
  for (const nf::RecordWriter& d : drains) w.AppendRecords(d);
  return w.bytes();
}

// Saves |bytes| as |name| under the test output folder's |folder| (COMMLENS_TEST_OUTPUT
// names that folder on a machine the build was carried to), imports and finishes it.
inline model::RankTrace ImportRankFile(const std::vector<uint8_t>& bytes, const std::string& folder,
                                       const std::string& name) {
  const char* out = std::getenv("COMMLENS_TEST_OUTPUT");
  const auto dir =
      (out ? std::filesystem::path(out) : std::filesystem::path(COMMLENS_BINARY_DIR) / "test-output") / folder;
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  auto t = importers::ImportNativeTrace(path);
  EXPECT_TRUE(t.ok()) << t.status().message();
  if (!t.ok()) return {};
  model::RankTrace r = std::move(t).value();
  passes::FinishRank(&r);
  return r;
}

}  // namespace commlens::recorder::cupti::testing
