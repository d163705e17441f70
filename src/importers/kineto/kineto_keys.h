// One catalog of the Kineto (PyTorch profiler) trace keys commlens reads. Importer and
// any exporter share these names; nothing else spells them. Sources: Kineto
// libkineto/src/output_json.cpp and PyTorch torch/profiler/profiler.py (facts only).
#pragma once

#include <string_view>

namespace commlens::importers::kineto_keys {

// Top level
inline constexpr std::string_view kTraceEvents = "traceEvents";
inline constexpr std::string_view kBaseTimeNanoseconds = "baseTimeNanoseconds";
inline constexpr std::string_view kDisplayTimeUnit = "displayTimeUnit";
inline constexpr std::string_view kDistributedInfo = "distributedInfo";
inline constexpr std::string_view kDeviceProperties = "deviceProperties";
inline constexpr std::string_view kHostName = "host_name";

// distributedInfo
inline constexpr std::string_view kRank = "rank";
inline constexpr std::string_view kWorldSize = "world_size";
inline constexpr std::string_view kBackend = "backend";
inline constexpr std::string_view kNcclVersion = "nccl_version";
inline constexpr std::string_view kPgConfig = "pg_config";
inline constexpr std::string_view kPgName = "pg_name";
inline constexpr std::string_view kPgDesc = "pg_desc";
inline constexpr std::string_view kPgSize = "pg_size";
inline constexpr std::string_view kPgRanks = "ranks";

// deviceProperties entries
inline constexpr std::string_view kDeviceId = "id";
inline constexpr std::string_view kDeviceName = "name";
inline constexpr std::string_view kTotalGlobalMem = "totalGlobalMem";
inline constexpr std::string_view kNumSms = "numSms";

// Event fields
inline constexpr std::string_view kPh = "ph";
inline constexpr std::string_view kCat = "cat";
inline constexpr std::string_view kName = "name";
inline constexpr std::string_view kPid = "pid";
inline constexpr std::string_view kTid = "tid";
inline constexpr std::string_view kTs = "ts";
inline constexpr std::string_view kDur = "dur";
inline constexpr std::string_view kArgs = "args";
inline constexpr std::string_view kId = "id";  // flow events

// Metadata (ph "M") event names; their value is args.name
inline constexpr std::string_view kThreadName = "thread_name";
inline constexpr std::string_view kProcessName = "process_name";
inline constexpr std::string_view kArgName = "name";

// Event args
inline constexpr std::string_view kCorrelation = "correlation";
inline constexpr std::string_view kStream = "stream";
inline constexpr std::string_view kDevice = "device";
inline constexpr std::string_view kBytes = "bytes";
inline constexpr std::string_view kCollectiveName = "Collective name";
inline constexpr std::string_view kInMsgNelems = "In msg nelems";
inline constexpr std::string_view kOutMsgNelems = "Out msg nelems";
inline constexpr std::string_view kGroupSize = "Group size";
inline constexpr std::string_view kDtype = "dtype";
inline constexpr std::string_view kProcessGroupName = "Process Group Name";
inline constexpr std::string_view kProcessGroupDesc = "Process Group Description";
inline constexpr std::string_view kProcessGroupRanks = "Process Group Ranks";
inline constexpr std::string_view kSeq = "Seq";
inline constexpr std::string_view kSrcRank = "Src Rank";
inline constexpr std::string_view kDstRank = "Dst Rank";
// The host operator PyTorch records for every collective and p2p call (its args hold
// the collective fields; a batch's kernel has none of its own).
inline constexpr std::string_view kRecordParamComms = "record_param_comms";

// Categories
inline constexpr std::string_view kCatKernel = "kernel";
inline constexpr std::string_view kCatKernelLegacy = "Kernel";
inline constexpr std::string_view kCatMemcpy = "gpu_memcpy";
inline constexpr std::string_view kCatMemcpyLegacy = "Memcpy";
inline constexpr std::string_view kCatMemset = "gpu_memset";
inline constexpr std::string_view kCatMemsetLegacy = "Memset";
inline constexpr std::string_view kCatCudaSync = "cuda_sync";
inline constexpr std::string_view kCatCpuOp = "cpu_op";
inline constexpr std::string_view kCatUserAnnotation = "user_annotation";
inline constexpr std::string_view kCatGpuUserAnnotation = "gpu_user_annotation";
inline constexpr std::string_view kCatCudaRuntime = "cuda_runtime";
inline constexpr std::string_view kCatRuntimeLegacy = "Runtime";
inline constexpr std::string_view kCatCudaDriver = "cuda_driver";
inline constexpr std::string_view kCatPythonFunction = "python_function";
inline constexpr std::string_view kCatTrace = "Trace";
// Flow categories: CPU launch to GPU activity (kept as correlation ids, not as flows)
inline constexpr std::string_view kCatFlowLaunch = "ac2g";

}  // namespace commlens::importers::kineto_keys
