// Rendering: the text report (its matrix laid out like nvidia-smi topo -m) and the JSON
// document (schema in docs/topo.md; "schema_version" changes when a field changes
// meaning or goes away).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "topo/check.h"
#include "topo/link_matrix.h"
#include "topo/topology.h"

namespace commlens::topo {

inline constexpr int kTopoSchemaVersion = 1;

// The GPU/NIC matrix with CPU Affinity, NUMA Affinity and GPU NUMA ID columns, the
// legend and the NIC legend.
std::string RenderMatrixText(const Topology& topology, const LinkMatrix& matrix);
// NUMA affinity of a device as nvidia-smi topo -m prints it ("0", "0-1", "N/A").
std::string NumaAffinity(const Topology& topology, const PciDevice& pci);
// P2P read and write matrices (nvidia-smi topo -p2p r / w) and CUDA's peer access.
std::string RenderP2PText(const Topology& topology);
// The whole report; |findings| listed when |show_findings| (--check), else summarized.
std::string RenderText(const Topology& topology, const LinkMatrix& matrix, const std::vector<Finding>& findings,
                       bool show_findings);

nlohmann::ordered_json RenderJson(const Topology& topology, const LinkMatrix& matrix, const std::vector<Finding>& findings);

}  // namespace commlens::topo
