// The checks of a fabric preset: does this machine have what the environment asks for?
// They look at the environment the job will get (the preset applied, the user's own
// values kept) and at FabricFacts, and say, one line each, at a level:
//
//   efa, efa-gin  EFA devices and their ports; the network and tuner plugins the
//                 environment names, found as NCCL would find them; libfabric; NCCL's
//                 version; FI_PROVIDER when the user kept another one
//   efa-gin       also: NCCL has GIN (2.28.7 and later), and GIN over EFA (aws-ofi-nccl
//                 1.21 with NCCL 2.31.2 and later); GDRCopy, which aws-ofi-nccl's GIN needs
//   ib            active InfiniBand/RoCE ports; NCCL_IB_DISABLE and NCCL_NET not turning
//                 InfiniBand off; GPUDirect RDMA (nvidia_peermem); NCCL's version
//
// An error means the job will not use the fabric as asked; a warning, that it may not,
// or that something could not be checked (NCCL not found).
#pragma once

#include <vector>

#include "recorder/launcher/environment.h"
#include "recorder/launcher/fabric_preset.h"

namespace commlens::recorder::launcher {

// The first NCCL with GIN (the device API's GPU-initiated networking), and the first
// that runs it over an external network plugin such as aws-ofi-nccl's (with aws-ofi-nccl
// 1.21; its doc/gin-getting-started.md).
inline constexpr int kNcclGinVersion = NcclVersionCode(2, 28, 7);
inline constexpr int kNcclGinOverEfaVersion = NcclVersionCode(2, 31, 2);

std::vector<PresetCheck> CheckPreset(Preset preset, const Environment& job_env,
                                     const FabricFacts& facts);

// The file NCCL would load for a plugin variable's value: a path as is; a name in
// |library_dirs|, or NCCL's "libnccl-<kind>-<value>.so" there (|kind| "net" or "tuner").
// Empty when not found.
std::string ResolvePluginValue(const std::vector<std::string>& library_dirs, std::string_view kind,
                               std::string_view value);

}  // namespace commlens::recorder::launcher
