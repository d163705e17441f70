// TCP rendezvous and bootstrap for multi-process runs started without MPI (torchrun-style
// variables, or mpirun/srun in a portable build): rank 0 listens on MASTER_PORT, every
// other rank connects to MASTER_ADDR:MASTER_PORT and says who it is; once all have
// joined, rank 0 answers "ready". Later operations go through rank 0 (a star): fine
// for the few small messages a benchmark exchanges.
//
// Nothing here waits without a deadline: connecting retries until the timeout (rank 0
// may start last), rank 0 names the missing ranks when the timeout passes and tells the
// ranks that did join, and every send/receive of a later operation is bounded by the
// same timeout. Errors from timeouts carry the "timeout: " tag (errors.h).
//
// Wire format (host byte order; both ends are the same program): a 24-byte header
// {u32 magic "CLBR", u32 type, u32 a, u32 b, u64 payload length} and the payload.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "bench/bootstrap.h"
#include "common/status.h"

namespace commlens::bench {

// An owned file descriptor.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket();

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

class TcpBootstrap;

// Rank 0's side of the rendezvous. Split from Accept so tests can listen on an
// ephemeral port (port 0) and hand the chosen port to the other ranks.
class TcpRendezvousServer {
 public:
  static Result<std::unique_ptr<TcpRendezvousServer>> Listen(int port);
  int port() const { return port_; }
  // Waits until ranks 1..world-1 have joined or |timeout| has passed.
  Result<std::unique_ptr<TcpBootstrap>> Accept(int world, std::chrono::milliseconds timeout);

 private:
  TcpRendezvousServer(Socket listener, int port) : listener_(std::move(listener)), port_(port) {}
  Socket listener_;
  int port_;
};

class TcpBootstrap final : public Bootstrap {
 public:
  // Ranks 1..world-1: connect to rank 0 (retrying until |timeout|) and wait for "ready".
  static Result<std::unique_ptr<TcpBootstrap>> Join(const std::string& master_addr, int port,
                                                    int rank, int world,
                                                    std::chrono::milliseconds timeout);
  // Rank 0 listens and accepts; the others join.
  static Result<std::unique_ptr<TcpBootstrap>> Create(const std::string& master_addr, int port,
                                                      int rank, int world,
                                                      std::chrono::milliseconds timeout);

  int rank() const override { return rank_; }
  int size() const override { return world_; }
  std::string_view transport() const override { return "tcp"; }
  Status Broadcast(std::span<std::byte> data) override;
  Status AllGather(std::span<const std::byte> mine, std::vector<std::byte>* all) override;

 private:
  friend class TcpRendezvousServer;
  TcpBootstrap(int rank, int world, std::chrono::milliseconds timeout,
               std::vector<Socket> peers)
      : rank_(rank), world_(world), timeout_(timeout), peers_(std::move(peers)) {}

  int rank_;
  int world_;
  std::chrono::milliseconds timeout_;
  // Rank 0: peers_[r] is the connection to rank r (peers_[0] unused). Others: peers_[0]
  // is the connection to rank 0.
  std::vector<Socket> peers_;
};

}  // namespace commlens::bench
