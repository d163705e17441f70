// The collective operations commlens knows and their names in each source (their
// bandwidth definitions: bus_bandwidth.h). This one table is shared by the analyses, the
// benchmark and the recorder.
#pragma once

#include <cstdint>
#include <string_view>

namespace commlens::model {

enum class CommOp : uint8_t {
  kUnknown,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kReduce,
  kSend,
  kRecv,
  kSendRecv,
  kGather,
  kScatter,
  kBarrier,
  kCount
};

// Stable snake_case name used in reports and JSON ("all_reduce", "all_to_all", ...).
std::string_view CommOpName(CommOp op);
// Parses CommOpName's output back.
CommOp CommOpFromName(std::string_view name);
// PyTorch's "Collective name" argument ("allreduce", "_allgather_base",
// "all_gather_into_tensor_coalesced", "all_to_allv", "send", ...).
CommOp CommOpFromPyTorchName(std::string_view name);
// NCCL's function name as the profiler plugin gives it ("AllReduce", "Send", ...).
CommOp CommOpFromNcclFunc(std::string_view func);
// The operation encoded in an NCCL kernel name ("ncclDevKernel_AllReduce_Sum_f32_RING_LL",
// "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"); kUnknown when the name says nothing.
CommOp CommOpFromNcclKernelName(std::string_view kernel);

bool IsPointToPoint(CommOp op);

// Size in bytes of a datatype named by PyTorch ("Float", "BFloat16", "Long", ...) or by
// NCCL ("ncclFloat32", "ncclBfloat16", ...) or by the short names (f32, bf16, i64); 0 if unknown.
int DataTypeSize(std::string_view dtype);

}  // namespace commlens::model
