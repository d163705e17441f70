// Builds without hwloc (COMMLENS_PORTABLE, or libhwloc-dev missing): CPU facts come from
// sysfs only.
#include "topo/cpu_discovery.h"

namespace commlens::topo {

bool HwlocCompiledIn() { return false; }

std::optional<HwlocFacts> ReadHwlocFacts(const std::vector<std::string>&, std::string* error) {
  *error = "commlens was built without hwloc";
  return std::nullopt;
}

}  // namespace commlens::topo
