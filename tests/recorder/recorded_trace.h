// Reading back what the plugin wrote in a recorder test: the one trace of a folder,
// imported, and whether the importer noted something.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "importers/native/native_importer.h"
#include "model/trace.h"
#include "recorder/recorder_test_util.h"

namespace commlens::testing {

inline model::RankTrace ImportOnly(const std::string& dir) {
  std::vector<std::string> files = TracesIn(dir);
  EXPECT_EQ(files.size(), 1u) << dir;
  if (files.empty()) return {};
  auto t = importers::ImportNativeTrace(files[0]);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? std::move(t).value() : model::RankTrace{};
}

inline bool HasNote(const model::RankTrace& t, const std::string& part) {
  return std::any_of(t.notes.begin(), t.notes.end(),
                     [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

}  // namespace commlens::testing
