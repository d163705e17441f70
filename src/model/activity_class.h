// Classification of GPU activities into compute / communication / memory / other.
//
// The contract (docs/analysis.md) follows common practice so numbers agree with HTA and
// nsys2prv on the same trace. On the activity name, in this order:
//   communication: starts with "nccl", "hip" or "hccl", or contains "ncclKernel"
//   memory:        starts with "Memcpy", "Memset", "hipMemcpy", "hipMemset" or "dma"
//   compute:       none of: starts with nccl/hip/hccl/runFunction/job_exe/packet/pe_exe/
//                  cpum_exe_subgraph/collective_subgraph_execution/"Stream Wait Event",
//                  contains Memcpy/Memset/dma/Sync, or "cuda...LaunchKernel"
//   other:         the rest (sync markers such as "Stream Sync", "Event Sync")
// Memcpy/memset records are memory whatever their name says.
#pragma once

#include <string_view>

#include "model/trace.h"

namespace commlens::model {

ActivityClass ClassifyActivity(std::string_view name, ActivityKind kind);
std::string_view ActivityClassName(ActivityClass c);  // "compute", "communication", ...

// The copy direction a memcpy's name states ("Memcpy HtoD (Pageable -> Device)").
CopyKind CopyKindFromName(std::string_view name);
std::string_view CopyKindName(CopyKind k);  // "HtoD", "DtoH", ...

}  // namespace commlens::model
