// `commlens topo --check`: what is wrong with the machine, in plain words. Each finding
// names the devices; the exit code is 1 when any finding is a warning or worse.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "topo/link_matrix.h"
#include "topo/topology.h"

namespace commlens::topo {

enum class Severity : uint8_t { kInfo, kWarning, kError };

struct Finding {
  Severity severity = Severity::kInfo;
  std::string code;                  // stable key: "port_down", "p2p_disabled_nvlink", ...
  std::string message;               // one sentence naming the devices
  std::vector<std::string> devices;  // GPU#/NIC names and PCI addresses involved
};

std::vector<Finding> RunChecks(const Topology& topology, const LinkMatrix& matrix);

std::string_view SeverityName(Severity severity);  // "info", "warning", "error"

// 0 when no finding is a warning or an error, else 1 (`--check`'s exit code).
int ExitCodeFor(const std::vector<Finding>& findings);

}  // namespace commlens::topo
