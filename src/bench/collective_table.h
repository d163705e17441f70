// The benchmark's table: one entry per collective, supplying what the driver needs to
// size, fill, verify and rate it, so one driver runs them all. The GPU side adds each entry's run
// function (gpu/nccl_ops.h) keyed by the same CommOp; busbw factors come from
// model/bus_bandwidth.h so the analyses and the benchmark share one definition.
//
// Counts follow nccl-tests 2.19.6 (src/<coll>.cu, *GetCollByteCount): for a sweep size of
// S bytes and element size e, count = S / e, and
//   all_reduce, broadcast, reduce, sendrecv: send = recv = param = count
//   all_gather:     param = send = count/n rounded down to 16 bytes; recv = n * send
//   reduce_scatter: param = recv = count/n rounded down to 16 bytes; send = n * recv
//   alltoall:       param = count/n rounded down to 16 bytes; send = recv = n * param
// The printed size is max(send, recv) * e; the printed count is param; algbw divides the
// printed size by the time and busbw multiplies algbw by the factor.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "bench/verify.h"
#include "model/bus_bandwidth.h"
#include "model/collective.h"

namespace commlens::bench {

// Element counts of one rank for one size.
struct CollCounts {
  int64_t send = 0;   // elements read from the send buffer
  int64_t recv = 0;   // elements written to the receive buffer
  int64_t param = 0;  // the count passed to NCCL (nccl-tests' "count" column)
  // In-place placement, in elements, multiplied by the rank: send pointer =
  // recv buffer + send_inplace_offset * rank, recv pointer = recv buffer +
  // recv_inplace_offset * rank (all_gather reads its slice of the output,
  // reduce_scatter writes its slice of the input).
  int64_t send_inplace_offset = 0;
  int64_t recv_inplace_offset = 0;

  int64_t SizeBytes(int elt_size) const { return (send > recv ? send : recv) * elt_size; }
};

struct CollectiveSpec {
  model::CommOp op;
  std::string_view name;     // nccl-tests' binary stem: "all_reduce", "alltoall", "sendrecv"
  bool reduces;              // takes a reduction operator
  bool rooted;               // takes a root rank
  bool in_place_verifiable;  // false where the in-place result is undefined (alltoall,
                             // sendrecv: nccl-tests reports N/A there too)
  CollCounts (*counts)(int64_t count, int elt_size, int nranks);
  ExpectPlan (*expect)(const CollCounts& counts, int rank, int nranks, int root);

  double BusBwFactor(int nranks) const { return model::BusBwFactor(op, nranks); }
};

// All benchmarkable collectives, in nccl-tests' order.
std::span<const CollectiveSpec> Collectives();
const CollectiveSpec* FindCollective(model::CommOp op);
// Accepts "all_reduce", "allreduce", "alltoall", "all_to_all", "sendrecv", ...
const CollectiveSpec* FindCollective(std::string_view name);

}  // namespace commlens::bench
