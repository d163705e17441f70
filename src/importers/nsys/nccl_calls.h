// NCCL's own NVTX ranges (domain "NCCL") turned into the trace model's communication rows.
//
// NCCL 2.2x describes each API call with an NVTX payload (nvtx_payload.h): the
// communicator id, the message size, and the reduction op, root or peer; its init calls
// (ncclCommInitRank*) add the rank count and this process's rank. Each collective or p2p
// call becomes one CommOps row in the process group of its communicator, matched to the
// NCCL kernel it launched: a call outside a group launches inside its own range; calls
// between ncclGroupStart and ncclGroupEnd share the kernel launched inside ncclGroupEnd
// (several such calls are a batch: model::kCommBatched).
// A call whose kernel is not found (one-rank communicators copy without a kernel) keeps
// its host-side times.
//
// An export made without `--include-blobs=true` has no payloads: each call still becomes
// a row (op from the range's name, times from its kernel) with its size unknown (-1), in
// the process group named after the CUDA stream its kernel ran on (StreamGroupName), so
// that calls are numbered and matched across ranks by their order on that stream.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "importers/nsys/nvtx_payload.h"
#include "model/trace.h"

namespace commlens::importers::nsys {

// One range of the NCCL domain on a host thread, with what its payload said (-1: absent).
struct NcclRange {
  int64_t tid = 0;
  model::TimeNs start = 0;
  model::TimeNs end = 0;
  std::string_view api;  // "ncclAllReduce", "ncclGroupStart", ... (in the rank's pool)
  bool has_payload = false;
  uint64_t comm = 0;
  int64_t bytes = -1;    // NCCL's message size: one rank's count x type size
  int32_t nranks = -1;
  int32_t rank = -1;
  int32_t root = -1;
  int32_t peer = -1;
};

// Copies the fields NCCL's payload schemas name into |r|.
void ReadNcclFields(const std::vector<PayloadField>& fields, NcclRange* r);

struct NcclSummary {
  int world_rank = -1;   // this process's rank in its largest communicator
  int world_size = 0;
  uint64_t calls = 0;    // CommOps rows appended
  uint64_t matched = 0;  // of them, with their kernel
  uint64_t ranges_without_payload = 0;  // collective/p2p ranges the export gave no payload (in |calls|)
};

// The process group of payload-less calls whose kernels ran on CUDA stream |stream|.
std::string StreamGroupName(int32_t stream);

// Appends one CommOps row per collective or p2p range of |ranges| to |rank| (whose GPU
// activities and CUDA API calls are already appended), with its process group.
NcclSummary AppendNcclCalls(std::vector<NcclRange>& ranges, model::RankTrace* rank);

}  // namespace commlens::importers::nsys
