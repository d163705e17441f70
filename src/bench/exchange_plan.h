// One rank's part of a variable-size all-to-all (MoE dispatch and combine): for each peer,
// which bytes of the local send buffer go where in that peer's receive buffer. Plain
// data, shared by the host planner and the device kernels of every backend.
#pragma once

#include <cstdint>

namespace commlens::bench {

struct PeerCopy {
  int64_t src_offset;  // bytes into this rank's send buffer
  int64_t dst_offset;  // bytes into the peer's receive buffer
  int64_t bytes;
};

}  // namespace commlens::bench
