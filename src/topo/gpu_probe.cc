#include "topo/gpu_probe.h"

namespace commlens::topo {
namespace {

class DriverGpuProbe : public GpuProbe {
 public:
  GpuProbeResult Probe(const std::vector<std::string>& bdfs) override {
    GpuProbeResult result;
    ProbeNvml(bdfs, &result);
    ProbeCuda(bdfs, &result);
    // Without NVML, CUDA's access bit stands in for both directions.
    if (result.p2p_source.empty() && result.cuda_available) {
      result.p2p_source = "cuda";
      for (PeerFacts& peer : result.peers) {
        if (!peer.facts.cuda_access) continue;
        P2PStatus status = *peer.facts.cuda_access ? P2PStatus::kOk : P2PStatus::kNotSupported;
        peer.facts.read = status;
        peer.facts.write = status;
      }
    }
    return result;
  }
};

}  // namespace

std::unique_ptr<GpuProbe> MakeDriverGpuProbe() { return std::make_unique<DriverGpuProbe>(); }

}  // namespace commlens::topo
