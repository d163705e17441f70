// The MoE routing of a run and what it means for one rank's dispatch and combine.
//
// Router: token t of rank r picks |topk| distinct experts, drawn without replacement
// with weights 1/(e+1)^imbalance from a generator seeded by (seed, r, t). Every rank can
// thus compute every rank's routing, so per-peer sizes need no exchange (DeepEP
// exchanges them in its "notify" step; the benchmark times the payload only).
//
// Dispatch (as DeepEP's normal kernels): a token goes once to each rank that hosts at
// least one of its experts. The sender packs its tokens by destination rank, in token
// order; the receiver's buffer holds the tokens grouped by source rank, in the source's
// order. Combine is the reverse exchange (each received token returns to its source,
// where the identity experts' outputs are summed): the returned tokens land in the
// layout of the dispatch send buffer, and token t's output is the sum over its
// destination ranks of (experts of t on that rank) x (returned copy), i.e. topk x input.
//
// All offsets and sizes are in tokens here; PeerCopy (bytes) comes from DispatchCopies
// and CombineCopies.
#pragma once

#include <cstdint>
#include <vector>

#include "bench/exchange_plan.h"
#include "bench/moe/moe_config.h"
#include "bench/moe/moe_values.h"

namespace commlens::bench {

// The experts chosen for token |token| of |rank|, distinct, in draw order.
std::vector<int> RouteToken(const MoeConfig& config, int rank, int token);

struct MoePlan {
  int rank = 0;
  int nranks = 1;
  // Dispatch send side: tokens to peer p are send_tokens[send_begin[p] .. send_begin[p+1]).
  std::vector<int> send_tokens;
  std::vector<int64_t> send_begin;  // nranks + 1
  // Dispatch receive side: tokens from peer q occupy rows recv_begin[q] .. recv_begin[q+1]
  // of the receive buffer; recv_from_token[row] is the source's token id.
  std::vector<int64_t> recv_begin;  // nranks + 1
  std::vector<int> recv_from_token;
  // Where this rank's tokens land in each peer's receive buffer (the peer's recv_begin[rank]).
  std::vector<int64_t> remote_recv_begin;  // nranks
  // Where the tokens received from peer q go back to in q's combine buffer (laid out like
  // q's send buffer): q's send_begin[rank].
  std::vector<int64_t> return_begin;  // nranks
  // Combine: token t sums rows combine_rows[combine_begin[t] .. combine_begin[t+1]) of the
  // returned buffer (laid out like the send buffer), each times combine_weight (the number
  // of t's experts on that rank).
  std::vector<int64_t> combine_begin;  // tokens + 1
  std::vector<int> combine_rows;
  std::vector<int> combine_weight;
  // Rows the largest receive buffer of any rank needs (symmetric allocations use it).
  int64_t max_recv_rows = 0;
  int64_t max_send_rows = 0;

  int64_t send_rows() const { return send_begin.back(); }
  int64_t recv_rows() const { return recv_begin.back(); }
  // Tokens this rank sends to / receives from other ranks (not itself).
  int64_t remote_send_rows() const;
  int64_t remote_recv_rows() const;
};

MoePlan PlanMoe(const MoeConfig& config, int rank, int nranks);

// Per-peer byte copies of the dispatch (send buffer -> peers' receive buffers) and of the
// combine (receive buffer -> peers' combine buffers, laid out like their send buffers).
std::vector<PeerCopy> DispatchCopies(const MoePlan& plan, int64_t token_bytes);
std::vector<PeerCopy> CombineCopies(const MoePlan& plan, int64_t token_bytes);

// bf16 bits of a float that is exactly representable (the inputs and their multiples).
uint16_t ToBf16Bits(float value);
float FromBf16Bits(uint16_t bits);

}  // namespace commlens::bench
