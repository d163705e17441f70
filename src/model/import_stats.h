// What an importer could not use, counted by kind. A bad event never stops an import:
// it is counted here, the first few are kept with their byte offset, and the report
// shows the totals. Kinds are declared once, in the table below.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace commlens::model {

//        name                     description
#define COMMLENS_IMPORT_ISSUES(X)                                                              \
  X(kMalformedEvent, "malformed_event", "event is not a JSON object or a field has the wrong type") \
  X(kMissingTime, "missing_time", "event has no usable ts/dur")                                \
  X(kNegativeDuration, "negative_duration", "event ends before it starts")                    \
  X(kUnknownPhase, "unknown_phase", "event phase (ph) is not one commlens reads")             \
  X(kUnmatchedCorrelation, "unmatched_correlation", "GPU activity whose launch is not in the trace") \
  X(kBadCollectiveArgs, "bad_collective_args", "collective arguments could not be read")     \
  X(kUnknownCollective, "unknown_collective", "collective name commlens does not know")      \
  X(kTruncatedRecord, "truncated_record", "record cut short (file ends inside it)")          \
  X(kBadRecord, "bad_record", "record fails its checks")                                      \
  X(kDroppedByRecorder, "dropped_by_recorder", "events the recorder dropped (buffers full)") \
  X(kInvalidUtf8, "invalid_utf8", "bytes that are not UTF-8, read as U+FFFD (the event is kept)")

enum class ImportIssue : uint8_t {
#define COMMLENS_ENUM_ENTRY(id, name, desc) id,
  COMMLENS_IMPORT_ISSUES(COMMLENS_ENUM_ENTRY)
#undef COMMLENS_ENUM_ENTRY
  kCount
};

std::string_view IssueName(ImportIssue issue);
std::string_view IssueDescription(ImportIssue issue);

class ImportStats {
 public:
  static constexpr size_t kExamplesPerIssue = 3;
  struct Example {
    uint64_t offset;  // byte offset in the (decompressed) input
    std::string what;
  };

  void Count(ImportIssue issue, uint64_t offset, std::string_view what, uint64_t n = 1);
  // Puts back what was counted in another process (model/rank_trace_codec.h): the total
  // and the examples kept, replacing this kind's.
  void Restore(ImportIssue issue, uint64_t count, std::vector<Example> examples);
  // Adds what |other| counted (an importer's file-wide issues given to one of its ranks).
  void Merge(const ImportStats& other);
  uint64_t count(ImportIssue issue) const { return counts_[static_cast<size_t>(issue)]; }
  uint64_t total() const;
  const std::vector<Example>& examples(ImportIssue issue) const {
    return examples_[static_cast<size_t>(issue)];
  }

 private:
  std::array<uint64_t, static_cast<size_t>(ImportIssue::kCount)> counts_{};
  std::array<std::vector<Example>, static_cast<size_t>(ImportIssue::kCount)> examples_;
};

}  // namespace commlens::model
