// The few collective operations the benchmark needs between its processes, outside NCCL:
// share the NCCL unique id, agree on a start (barrier), and combine results (average
// time, summed wrong counts, per-iteration maxima). One interface, three transports:
// a single process (LocalBootstrap), TCP through rank 0 (tcp_bootstrap.h) and MPI
// (mpi_bootstrap.h, non-portable builds).
//
// Every operation is collective: all processes call it in the same order with the same
// sizes. Implementations bound each wait by a timeout and return an error rather than
// hang (MPI cannot; the driver's watchdog covers it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace commlens::bench {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;   // process index
  virtual int size() const = 0;   // number of processes
  virtual std::string_view transport() const = 0;  // "local", "tcp", "mpi"

  // |data| on rank 0 is copied into |data| on every rank (same length everywhere).
  virtual Status Broadcast(std::span<std::byte> data) = 0;
  // Every rank's |mine| (same length everywhere), concatenated in rank order.
  virtual Status AllGather(std::span<const std::byte> mine, std::vector<std::byte>* all) = 0;

  Status Barrier();
};

class LocalBootstrap final : public Bootstrap {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string_view transport() const override { return "local"; }
  Status Broadcast(std::span<std::byte>) override { return OkStatus(); }
  Status AllGather(std::span<const std::byte> mine, std::vector<std::byte>* all) override {
    all->assign(mine.begin(), mine.end());
    return OkStatus();
  }
};

// Helpers built on AllGather.
Result<std::vector<double>> AllGatherDoubles(Bootstrap& b, std::span<const double> mine);
Result<double> AllReduceSum(Bootstrap& b, double value);
Result<int64_t> AllReduceSum(Bootstrap& b, int64_t value);
// Element-wise maximum over ranks of equal-length vectors.
Result<std::vector<double>> AllReduceMax(Bootstrap& b, std::span<const double> mine);
// Strings of any length, one per rank.
Result<std::vector<std::string>> AllGatherStrings(Bootstrap& b, const std::string& mine);

}  // namespace commlens::bench
