#include "model/import_stats.h"

#include <utility>

namespace commlens::model {

namespace {
struct IssueInfo {
  std::string_view name;
  std::string_view description;
};
constexpr IssueInfo kIssues[] = {
#define COMMLENS_INFO_ENTRY(id, name, desc) {name, desc},
    COMMLENS_IMPORT_ISSUES(COMMLENS_INFO_ENTRY)
#undef COMMLENS_INFO_ENTRY
};
}  // namespace

std::string_view IssueName(ImportIssue issue) { return kIssues[static_cast<size_t>(issue)].name; }
std::string_view IssueDescription(ImportIssue issue) {
  return kIssues[static_cast<size_t>(issue)].description;
}

void ImportStats::Count(ImportIssue issue, uint64_t offset, std::string_view what, uint64_t n) {
  size_t i = static_cast<size_t>(issue);
  counts_[i] += n;
  if (examples_[i].size() < kExamplesPerIssue) examples_[i].push_back({offset, std::string(what)});
}

void ImportStats::Restore(ImportIssue issue, uint64_t count, std::vector<Example> examples) {
  counts_[static_cast<size_t>(issue)] = count;
  examples_[static_cast<size_t>(issue)] = std::move(examples);
}

void ImportStats::Merge(const ImportStats& other) {
  for (size_t i = 0; i < counts_.size(); ++i) {
    counts_[i] += other.counts_[i];
    for (const Example& e : other.examples_[i])
      if (examples_[i].size() < kExamplesPerIssue) examples_[i].push_back(e);
  }
}

uint64_t ImportStats::total() const {
  uint64_t t = 0;
  for (uint64_t c : counts_) t += c;
  return t;
}

}  // namespace commlens::model
