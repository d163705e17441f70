// When the last member of each matched operation arrived, per rank and comm op: the
// moment from which the op moves data instead of waiting.
//
// A collective's kernel starts on each rank when that rank launches it, and can finish
// only after every member has joined. Its kernel time is therefore waiting (until the last
// member started) plus transfer (the rest). Bandwidth from the kernel time counts the
// waiting and blames the fabric for a late rank; bandwidth from the transfer time is what
// the fabric delivered (docs/analysis.md, "Transfer bandwidth").
//
// Known for: collectives complete in the window (every rank that ran them has the op in
// its window, every member GPU-timed, and no member of the group missing from the job),
// and point-to-point messages with both ends (a recv's transfer starts when its send has
// started, and the send's when its recv has). Unknown (kNoTime) for the rest, and for an
// op whose end comes before the last member's start: that breaks causality, the clocks
// are off, and no transfer time can be trusted.
//
// NCCL 2.31's kernel phases (CommOps::initial_sync, recordings with `phases`) measure each
// member's wait on its own GPU's clock, so where they are known no clock alignment
// enters: a member's transfer starts when its initial sync ends, and where every member
// has one, the last to arrive is the one that waited least. They win over the aligned
// starts; an op with its own phase but missing members (or none matched) still gets its
// own wait.
#pragma once

#include <cstdint>
#include <vector>

#include "model/trace.h"

namespace commlens::analysis {

struct Arrivals {
  // Per rank index, per comm row: the latest start of the op's members (kNoTime: unknown).
  std::vector<std::vector<model::TimeNs>> last_start;
  // Per rank index, per comm row: the rank index of the member that started last
  // (model::kNoIndex: unknown, also where last_start is known).
  std::vector<std::vector<uint32_t>> last_rank;
  uint64_t from_phases = 0;  // ops (per rank) whose arrival came from kernel phases

  // The transfer time of rank |r|'s op |row|: its end less the latest member start (or its
  // own start, if later); -1 when unknown.
  model::TimeNs Transfer(const model::Trace& trace, size_t r, uint32_t row) const;
};

// The member (an index into trace.matched's member columns) of matched op |k| that arrived
// last by its kernel phases, the one whose initial sync was shortest; model::kNoIndex
// unless every member has one.
uint32_t LastByPhases(const model::Trace& trace, size_t k);

// |in_window[r][row]|: the op is in rank r's analysis window (collectives.h OpsInWindow).
Arrivals ComputeArrivals(const model::Trace& trace, const std::vector<std::vector<uint8_t>>& in_window);

}  // namespace commlens::analysis
