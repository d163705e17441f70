#include "importers/nsys/nccl_calls.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <unordered_map>

#include "common/strings.h"
#include "model/collective.h"

namespace commlens::importers::nsys {

namespace {

// Ops whose NCCL message size is one rank's share: the nccl-tests size is n times it.
bool SizeIsPerRank(model::CommOp op) {
  switch (op) {
    case model::CommOp::kAllGather:
    case model::CommOp::kReduceScatter:
    case model::CommOp::kAllToAll:
    case model::CommOp::kGather:
    case model::CommOp::kScatter:
      return true;
    default:
      return false;
  }
}

bool IsInit(std::string_view api) { return StartsWith(api, "ncclCommInit"); }

std::string CommName(uint64_t comm) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(comm));
  return buf;
}

struct CommInfo {
  int32_t nranks = -1;
  int32_t rank = -1;
};

struct Launch {
  int64_t tid;
  model::TimeNs time;
  uint32_t kernel;  // row in GpuActivities
};

}  // namespace

void ReadNcclFields(const std::vector<PayloadField>& fields, NcclRange* r) {
  r->has_payload = true;
  auto as_i32 = [](int64_t v) { return v >= INT32_MIN && v <= INT32_MAX ? static_cast<int32_t>(v) : -1; };
  for (const PayloadField& f : fields) {
    if (f.name == "NCCL communicator ID") r->comm = static_cast<uint64_t>(f.value);
    else if (StartsWith(f.name, "Message size")) r->bytes = f.value >= 0 ? f.value : -1;
    else if (f.name == "No. of ranks") r->nranks = as_i32(f.value);
    else if (f.name == "Rank") r->rank = as_i32(f.value);
    else if (f.name == "Root") r->root = as_i32(f.value);
    else if (f.name == "Peer rank" || f.name == "Peer") r->peer = as_i32(f.value);
  }
}

NcclSummary AppendNcclCalls(std::vector<NcclRange>& ranges, model::RankTrace* rank) {
  NcclSummary summary;
  std::sort(ranges.begin(), ranges.end(), [](const NcclRange& a, const NcclRange& b) {
    return a.tid != b.tid ? a.tid < b.tid : a.start < b.start;
  });
  // Communicators: size and this rank from the init calls.
  std::unordered_map<uint64_t, CommInfo> comms;
  for (const NcclRange& r : ranges) {
    if (!IsInit(r.api) || !r.has_payload || r.nranks <= 0) continue;
    comms[r.comm] = {r.nranks, r.rank};
    if (r.nranks > summary.world_size) {
      summary.world_size = r.nranks;
      summary.world_rank = r.rank;
    }
  }

  // NCCL kernel launches: CUDA API calls whose correlation id is an NCCL kernel's.
  model::GpuActivities& gpu = rank->gpu;
  std::unordered_map<int64_t, uint32_t> nccl_kernels;
  for (uint32_t i = 0; i < gpu.size(); ++i)
    if (gpu.kind[i] == model::ActivityKind::kKernel && gpu.correlation[i] != 0 &&
        StartsWith(rank->strings.Get(gpu.name[i]), "nccl"))
      nccl_kernels.emplace(gpu.correlation[i], i);
  std::vector<Launch> launches;
  const model::HostEvents& host = rank->host;
  for (uint32_t i = 0; i < host.size(); ++i) {
    auto it = nccl_kernels.find(host.correlation[i]);
    if (it != nccl_kernels.end()) launches.push_back({host.tid[i], host.start[i], it->second});
  }
  std::sort(launches.begin(), launches.end(), [](const Launch& a, const Launch& b) {
    return a.tid != b.tid ? a.tid < b.tid : a.time < b.time;
  });
  // The first launch on |tid| inside [start, end], or nullptr.
  auto launch_in = [&](int64_t tid, model::TimeNs start, model::TimeNs end) -> const Launch* {
    auto it = std::lower_bound(launches.begin(), launches.end(), Launch{tid, start, 0},
                               [](const Launch& a, const Launch& b) {
                                 return a.tid != b.tid ? a.tid < b.tid : a.time < b.time;
                               });
    return it != launches.end() && it->tid == tid && it->time <= end ? &*it : nullptr;
  };

  std::vector<uint32_t> pending;  // rows of calls inside the open group
  std::vector<uint32_t> without_payload;  // rows of calls whose communicator is unknown
  int depth = 0;
  int64_t current_tid = -1;
  auto attach = [&](uint32_t row, const Launch* l) {
    model::CommOps& c = rank->comms;
    if (!l) return;
    c.activity[row] = l->kernel;
    c.start[row] = gpu.start[l->kernel];
    c.end[row] = gpu.end[l->kernel];
    if (gpu.comm[l->kernel] == model::kNoIndex) gpu.comm[l->kernel] = row;
    ++summary.matched;
  };
  for (const NcclRange& r : ranges) {
    if (r.tid != current_tid) {
      current_tid = r.tid;
      depth = 0;
      pending.clear();
    }
    if (r.api == "ncclGroupStart") {
      ++depth;
      continue;
    }
    if (r.api == "ncclGroupEnd") {
      if (depth > 0 && --depth == 0) {
        const Launch* l = launch_in(r.tid, r.start, r.end);
        for (uint32_t row : pending) attach(row, l);
        // Several calls that ran as one kernel (batched sends and receives, coalesced
        // collectives): a batch, its time shared (model::kCommBatched).
        const bool consecutive = std::adjacent_find(pending.begin(), pending.end(), [](uint32_t a, uint32_t b) {
                                   return b != a + 1;
                                 }) == pending.end();
        if (l && pending.size() > 1 && consecutive)
          for (size_t k = 0; k < pending.size(); ++k)
            rank->comms.flags[pending[k]] |= model::kCommBatched | (k > 0 ? model::kCommBatchNext : 0);
        pending.clear();
      }
      continue;
    }
    std::string_view func = r.api;
    if (StartsWith(func, "nccl")) func.remove_prefix(4);
    const model::CommOp op = model::CommOpFromNcclFunc(func);
    if (op == model::CommOp::kUnknown) continue;  // init, finalize, count, split, ...
    if (!r.has_payload) {
      // Counted and timed all the same: op from the range's name, time from its kernel;
      // size and communicator unknown (the group comes from the kernel's stream, below).
      ++summary.ranges_without_payload;
      const uint32_t row = rank->comms.Append(r.start, r.end, op, model::StringId{}, -1, -1, -1, model::kNoIndex,
                                              -1, -1, model::kNoIndex);
      rank->comms.enqueue[row] = r.start;
      without_payload.push_back(row);
      ++summary.calls;
      if (depth > 0) pending.push_back(row);
      else attach(row, launch_in(r.tid, r.start, r.end));
      continue;
    }
    const auto comm = comms.find(r.comm);
    const int32_t nranks = comm == comms.end() ? -1 : comm->second.nranks;
    model::ProcessGroup g;
    g.name = CommName(r.comm);
    g.comm_hash = r.comm;
    g.size = nranks > 0 ? nranks : 0;
    g.self = comm == comms.end() ? -1 : comm->second.rank;
    const uint32_t group = rank->FindOrAddGroup(g);
    int64_t bytes = r.bytes;
    uint8_t flags = 0;
    if (bytes >= 0 && SizeIsPerRank(op)) {
      if (nranks > 0 && !__builtin_mul_overflow(bytes, static_cast<int64_t>(nranks), &bytes)) {
      } else if (nranks > 0) {
        bytes = -1;
      } else {
        flags |= model::kCommBytesPerRank;  // the job pass scales it once the group's size is known
      }
    }
    const int32_t peer = model::IsPointToPoint(op) ? r.peer : r.root;
    const uint32_t row = rank->comms.Append(r.start, r.end, op, model::StringId{}, -1, -1, bytes, group, -1, peer,
                                            model::kNoIndex);
    rank->comms.enqueue[row] = r.start;
    rank->comms.flags[row] = flags;
    ++summary.calls;
    if (depth > 0) pending.push_back(row);
    else attach(row, launch_in(r.tid, r.start, r.end));
  }
  // A call without payload is put in the group of the CUDA stream its kernel ran on:
  // PyTorch gives each process group its own NCCL stream, created in the same order on
  // every rank, so the k-th call on a stream is the k-th of that stream on every rank
  // (docs/nsys.md says when this does not hold). A call without a kernel has no group.
  for (uint32_t row : without_payload) {
    const uint32_t kernel = rank->comms.activity[row];
    if (kernel == model::kNoIndex) continue;
    model::ProcessGroup g;
    g.name = StreamGroupName(gpu.stream[kernel]);
    rank->comms.group[row] = rank->FindOrAddGroup(g);
  }
  return summary;
}

std::string StreamGroupName(int32_t stream) { return "stream " + std::to_string(stream); }

}  // namespace commlens::importers::nsys
