// A real job whose names are hostile or broken, for the writers' tests: spreadsheet
// formulas (OWASP's CSV injection list), markup, line breaks and other control bytes, and
// bytes that are not UTF-8. A trace can carry any of these (a kernel, host or process
// group is named by whoever ran the job; a recorder can cut a name mid-character).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/trace.h"

namespace commlens::testing {

inline const std::vector<std::string> kHostileNames = {
    "=HYPERLINK(\"http://evil.example\",\"click\")",
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "line\nbreak\r\nand\ttab\x01\x1b[31m\x7f\x0b\x0c",
    "bad \xff\xfe utf-8 \xc3",
    "<img src=x onerror=alert(1)>\"quoted\",comma</script>",
};

// Renames |trace|'s hosts, process groups and first kernel names with kHostileNames (a
// suffix keeps them apart: "…#3"). Returns the kernel names given, by their old name.
inline std::map<std::string, std::string> GiveHostileNames(model::Trace* trace) {
  const size_t n = kHostileNames.size();
  for (size_t r = 0; r < trace->ranks.size(); ++r) trace->ranks[r].hostname = kHostileNames[r % n];
  for (size_t g = 0; g < trace->groups.size(); ++g) {
    trace->groups[g].name = kHostileNames[(g + 1) % n] + "#g" + std::to_string(g);
    trace->groups[g].description = kHostileNames[(g + 2) % n] + "#d" + std::to_string(g);
  }
  for (model::RankTrace& rank : trace->ranks)  // each rank's copy of its groups
    for (model::ProcessGroup& g : rank.groups)
      if (g.job_group < trace->groups.size()) {
        g.name = trace->groups[g.job_group].name;
        g.description = trace->groups[g.job_group].description;
      }
  // The same old name gets the same new one on every rank (kernels merge by name).
  std::map<std::string, std::string> renamed;
  for (model::RankTrace& rank : trace->ranks) {
    std::map<uint32_t, model::StringId> ids;  // old id -> new id, this rank
    for (uint32_t i = 0; i < rank.gpu.size(); ++i) {
      if (rank.gpu.kind[i] != model::ActivityKind::kKernel) continue;
      const uint32_t old_id = rank.gpu.name[i].value;
      auto it = ids.find(old_id);
      if (it == ids.end()) {
        const std::string old_name(rank.strings.Get(rank.gpu.name[i]));
        auto known = renamed.find(old_name);
        if (known == renamed.end() && renamed.size() < n)
          known = renamed.emplace(old_name, kHostileNames[renamed.size()] + "#" + std::to_string(renamed.size())).first;
        const model::StringId id = known == renamed.end() ? rank.gpu.name[i] : rank.strings.Intern(known->second);
        it = ids.emplace(old_id, id).first;
      }
      rank.gpu.name[i] = it->second;
    }
  }
  return renamed;
}

}  // namespace commlens::testing
