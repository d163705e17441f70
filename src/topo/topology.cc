#include "topo/topology.h"

#include <algorithm>
#include <array>

namespace commlens::topo {
namespace {

constexpr std::array<std::string_view, 7> kP2PCodes = {"OK", "CNS", "GNS", "TNS", "DR", "NS", "U"};

int ActiveSwitchLinks(const Gpu& gpu) {
  return static_cast<int>(std::count_if(gpu.nvlinks.begin(), gpu.nvlinks.end(), [](const NvLink& l) {
    return l.active && l.remote == NvLinkRemote::kSwitch;
  }));
}

}  // namespace

std::string_view P2PStatusCode(P2PStatus status) { return kP2PCodes[static_cast<size_t>(status)]; }

std::optional<P2PStatus> P2PStatusFromCode(std::string_view code) {
  for (size_t i = 0; i < kP2PCodes.size(); ++i) {
    if (kP2PCodes[i] == code) return static_cast<P2PStatus>(i);
  }
  return std::nullopt;
}

std::string_view NicKindName(NicKind kind) {
  switch (kind) {
    case NicKind::kInfiniBand: return "InfiniBand";
    case NicKind::kRoce: return "RoCE";
    case NicKind::kEfa: return "EFA";
    case NicKind::kOther: break;
  }
  return "RDMA";
}

std::string_view NvLinkRemoteName(NvLinkRemote remote) {
  switch (remote) {
    case NvLinkRemote::kGpu: return "gpu";
    case NvLinkRemote::kSwitch: return "switch";
    case NvLinkRemote::kOther: return "other";
    case NvLinkRemote::kUnknown: break;
  }
  return "unknown";
}

int NvLinkCount(const Topology& topology, size_t a, size_t b) {
  const Gpu& from = topology.gpus[a];
  const Gpu& to = topology.gpus[b];
  int direct = static_cast<int>(std::count_if(from.nvlinks.begin(), from.nvlinks.end(), [&](const NvLink& l) {
    return l.active && l.remote == NvLinkRemote::kGpu && l.remote_bdf == to.pci.bdf;
  }));
  // NVSwitch systems (HGX H100: 18 links per GPU into 4 switches) reach every peer over
  // all their switch links; nvidia-smi shows that as NV18 for every pair.
  int switched = std::min(ActiveSwitchLinks(from), ActiveSwitchLinks(to));
  return direct + switched;
}

}  // namespace commlens::topo
