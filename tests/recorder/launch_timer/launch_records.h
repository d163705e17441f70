// The launch timer's records in what a test drained: each LaunchTiming record, and the
// last LaunchTimer record into |state|.
#pragma once

#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "native_format/record_reader.h"
#include "native_format/record_writer.h"

namespace commlens::recorder::launch_timer {

inline std::vector<native_format::LaunchTimingRecord> LaunchRecords(const native_format::RecordWriter& w,
                                                                    native_format::LaunchTimerRecord* state) {
  namespace nf = native_format;
  std::vector<nf::LaunchTimingRecord> out;
  nf::RecordReader reader(std::span<const uint8_t>(w.bytes().data(), w.size()), 0);
  nf::RecordView r;
  while (reader.Next(&r) == nf::ReadStatus::kRecord) {
    if (r.type == static_cast<uint16_t>(nf::RecordType::kLaunchTiming)) {
      EXPECT_TRUE(nf::DecodePayload(r, &out.emplace_back()));
    } else if (r.type == static_cast<uint16_t>(nf::RecordType::kLaunchTimer)) {
      EXPECT_TRUE(nf::DecodePayload(r, state));
    }
  }
  return out;
}

}  // namespace commlens::recorder::launch_timer
