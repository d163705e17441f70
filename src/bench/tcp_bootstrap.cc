#include "bench/tcp_bootstrap.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "bench/errors.h"

namespace commlens::bench {

namespace {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;
using std::chrono::milliseconds;

constexpr uint32_t kMagic = 0x52424C43;  // "CLBR" in little-endian byte order
constexpr uint64_t kMaxPayload = uint64_t{1} << 30;
constexpr milliseconds kHelloWait{2000};   // for a connection to say who it is
constexpr milliseconds kRetryPause{100};   // between connection attempts

enum FrameType : uint32_t { kHello = 1, kReady = 2, kAbort = 3, kData = 4 };

struct FrameHeader {
  uint32_t magic;
  uint32_t type;
  uint32_t a;
  uint32_t b;
  uint64_t length;
};
static_assert(sizeof(FrameHeader) == 24);

struct Frame {
  uint32_t type = 0;
  uint32_t a = 0;
  uint32_t b = 0;
  std::vector<std::byte> payload;
};

int MillisLeft(Deadline deadline) {
  auto ms = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(ms, 0, INT_MAX));
}

std::string Seconds(milliseconds ms) { return fmt::format("{:g} s", ms.count() / 1000.0); }

Status SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    return Error(fmt::format("fcntl(O_NONBLOCK): {}", std::strerror(errno)));
  return OkStatus();
}

void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Waits for |events| on |fd|; false when |deadline| passes first.
Result<bool> WaitFor(int fd, short events, Deadline deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int rc = poll(&p, 1, MillisLeft(deadline));
    if (rc > 0) return true;  // POLLERR/POLLHUP too: the next send/recv reports them
    if (rc == 0) return false;
    if (errno != EINTR) return Error(fmt::format("poll: {}", std::strerror(errno)));
  }
}

Status SendAll(int fd, const void* data, size_t n, Deadline deadline, const std::string& peer) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k > 0) {
      p += k;
      n -= static_cast<size_t>(k);
    } else if (k < 0 && errno == EINTR) {
      continue;
    } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      COMMLENS_ASSIGN_OR_RETURN(bool ready, WaitFor(fd, POLLOUT, deadline));
      if (!ready) return TimeoutError(fmt::format("sending to {} did not complete in time", peer));
    } else {
      return Error(fmt::format("sending to {} failed: {}", peer, std::strerror(errno)));
    }
  }
  return OkStatus();
}

Status RecvAll(int fd, void* data, size_t n, Deadline deadline, const std::string& peer) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t k = ::recv(fd, p, n, 0);
    if (k > 0) {
      p += k;
      n -= static_cast<size_t>(k);
    } else if (k == 0) {
      return Error(fmt::format("{} closed the connection", peer));
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      COMMLENS_ASSIGN_OR_RETURN(bool ready, WaitFor(fd, POLLIN, deadline));
      if (!ready) return TimeoutError(fmt::format("no message from {} in time", peer));
    } else {
      return Error(fmt::format("receiving from {} failed: {}", peer, std::strerror(errno)));
    }
  }
  return OkStatus();
}

Status SendFrame(int fd, uint32_t type, uint32_t a, uint32_t b, std::span<const std::byte> payload,
                 Deadline deadline, const std::string& peer) {
  FrameHeader h{kMagic, type, a, b, payload.size()};
  COMMLENS_RETURN_IF_ERROR(SendAll(fd, &h, sizeof h, deadline, peer));
  return SendAll(fd, payload.data(), payload.size(), deadline, peer);
}

Status SendText(int fd, uint32_t type, const std::string& text, Deadline deadline,
                const std::string& peer) {
  return SendFrame(fd, type, 0, 0, std::as_bytes(std::span(text.data(), text.size())), deadline,
                   peer);
}

Result<Frame> RecvFrame(int fd, Deadline deadline, const std::string& peer) {
  FrameHeader h{};
  COMMLENS_RETURN_IF_ERROR(RecvAll(fd, &h, sizeof h, deadline, peer));
  if (h.magic != kMagic)
    return Error(fmt::format("{} is not a commlens bench peer (bad magic)", peer));
  if (h.length > kMaxPayload)
    return Error(fmt::format("{} sent an oversized message ({} bytes)", peer, h.length));
  Frame f{h.type, h.a, h.b, std::vector<std::byte>(h.length)};
  COMMLENS_RETURN_IF_ERROR(RecvAll(fd, f.payload.data(), f.payload.size(), deadline, peer));
  return f;
}

// A frame of |type|; an abort from rank 0 becomes an error carrying rank 0's message
// (which keeps its "timeout: " tag).
Result<Frame> Expect(int fd, uint32_t type, Deadline deadline, const std::string& peer) {
  COMMLENS_ASSIGN_OR_RETURN(Frame f, RecvFrame(fd, deadline, peer));
  if (f.type == kAbort) {
    std::string why(reinterpret_cast<const char*>(f.payload.data()), f.payload.size());
    return Error(why + " (reported by rank 0)");
  }
  if (f.type != type)
    return Error(fmt::format("{} sent message type {} where {} was expected", peer, f.type, type));
  return f;
}

std::string RankName(int rank) { return fmt::format("rank {}", rank); }

std::string MissingRanks(const std::vector<Socket>& peers) {
  std::vector<int> missing;
  for (size_t r = 1; r < peers.size(); ++r)
    if (!peers[r].valid()) missing.push_back(static_cast<int>(r));
  std::string list = fmt::format("{}", fmt::join(missing.begin(),
                                                 missing.begin() + std::min<size_t>(missing.size(), 16),
                                                 ", "));
  if (missing.size() > 16) list += fmt::format(", ... ({} in all)", missing.size());
  return list;
}

// Tells every joined rank why the rendezvous failed, then returns |status|.
Status AbortAll(std::vector<Socket>& peers, const Status& status) {
  Deadline soon = Clock::now() + milliseconds(500);
  for (size_t r = 1; r < peers.size(); ++r)
    if (peers[r].valid())
      (void)SendText(peers[r].fd(), kAbort, status.message(), soon, RankName(static_cast<int>(r)));
  return status;
}

// One non-blocking connection attempt to |ai|, bounded by |deadline|.
Result<Socket> TryConnect(const addrinfo* ai, Deadline deadline) {
  Socket s(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
  if (!s.valid()) return Error(fmt::format("socket: {}", std::strerror(errno)));
  COMMLENS_RETURN_IF_ERROR(SetNonBlocking(s.fd()));
  if (::connect(s.fd(), ai->ai_addr, ai->ai_addrlen) == 0) return s;
  if (errno != EINPROGRESS) return Error(std::strerror(errno));
  COMMLENS_ASSIGN_OR_RETURN(bool ready, WaitFor(s.fd(), POLLOUT, deadline));
  if (!ready) return Error("connection attempt timed out");
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) return Error(std::strerror(err));
  return s;
}

}  // namespace

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

Socket::~Socket() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<TcpRendezvousServer>> TcpRendezvousServer::Listen(int port) {
  // Dual-stack IPv6 first (accepts IPv4 too), IPv4 where IPv6 is disabled.
  Socket s(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1, zero = 0;
  if (s.valid()) {
    setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(s.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = htons(static_cast<uint16_t>(port));
    if (::bind(s.fd(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) s = Socket();
  }
  if (!s.valid()) {
    s = Socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!s.valid()) return Error(fmt::format("rendezvous: socket: {}", std::strerror(errno)));
    setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (::bind(s.fd(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
      return Error(fmt::format("rendezvous: cannot listen on port {}: {}", port,
                               std::strerror(errno)));
  }
  if (::listen(s.fd(), SOMAXCONN) != 0)
    return Error(fmt::format("rendezvous: listen on port {}: {}", port, std::strerror(errno)));
  COMMLENS_RETURN_IF_ERROR(SetNonBlocking(s.fd()));
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(s.fd(), reinterpret_cast<sockaddr*>(&bound), &len);
  int actual = bound.ss_family == AF_INET6
                   ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                   : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return std::unique_ptr<TcpRendezvousServer>(new TcpRendezvousServer(std::move(s), actual));
}

Result<std::unique_ptr<TcpBootstrap>> TcpRendezvousServer::Accept(int world,
                                                                  milliseconds timeout) {
  const Deadline deadline = Clock::now() + timeout;
  std::vector<Socket> peers(static_cast<size_t>(world));
  std::vector<Socket> pending;  // accepted, not yet identified
  int joined = 0;
  while (joined < world - 1) {
    std::vector<pollfd> fds{{listener_.fd(), POLLIN, 0}};
    for (const Socket& p : pending) fds.push_back({p.fd(), POLLIN, 0});
    int rc = poll(fds.data(), fds.size(), MillisLeft(deadline));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return AbortAll(peers, Error(fmt::format("poll: {}", std::strerror(errno))));
    if (rc == 0) {
      return AbortAll(peers, TimeoutError(fmt::format(
                                 "rendezvous on port {}: {} of {} other ranks joined within {}; "
                                 "missing ranks: {}",
                                 port_, joined, world - 1, Seconds(timeout), MissingRanks(peers))));
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      Socket conn = std::move(pending[i - 1]);
      // A connection that does not identify itself promptly is dropped, not fatal.
      auto hello = Expect(conn.fd(), kHello, std::min(deadline, Clock::now() + kHelloWait),
                          "a connecting process");
      if (!hello.ok()) continue;
      int rank = static_cast<int>(hello->a), their_world = static_cast<int>(hello->b);
      std::string problem;
      if (their_world != world) {
        problem = fmt::format("rank {} was started with world size {}, rank 0 with {}", rank,
                              their_world, world);
      } else if (rank < 1 || rank >= world) {
        problem = fmt::format("a process claims rank {}, outside 1..{}", rank, world - 1);
      } else if (peers[rank].valid()) {
        problem = fmt::format("two processes claim rank {}", rank);
      }
      if (!problem.empty()) {
        (void)SendText(conn.fd(), kAbort, "usage: rendezvous: " + problem, deadline, "it");
        return AbortAll(peers, UsageError("rendezvous: " + problem));
      }
      SetNoDelay(conn.fd());
      peers[rank] = std::move(conn);
      ++joined;
    }
    std::erase_if(pending, [](const Socket& s) { return !s.valid(); });
    if (fds[0].revents) {
      for (;;) {
        int fd = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) break;  // EAGAIN: no more for now
        pending.emplace_back(fd);
      }
    }
  }
  for (int r = 1; r < world; ++r)
    COMMLENS_RETURN_IF_ERROR(SendFrame(peers[r].fd(), kReady, 0, 0, {}, deadline, RankName(r)));
  return std::unique_ptr<TcpBootstrap>(new TcpBootstrap(0, world, timeout, std::move(peers)));
}

Result<std::unique_ptr<TcpBootstrap>> TcpBootstrap::Join(const std::string& master_addr, int port,
                                                         int rank, int world,
                                                         milliseconds timeout) {
  const Deadline deadline = Clock::now() + timeout;
  const std::string where = fmt::format("{}:{}", master_addr, port);
  std::string last_error = "no attempt";
  Socket conn;
  while (!conn.valid()) {
    if (Clock::now() >= deadline)
      return TimeoutError(fmt::format("rank {} could not connect to rank 0 at {} within {} ({})",
                                      rank, where, Seconds(timeout), last_error));
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    int rc = getaddrinfo(master_addr.c_str(), std::to_string(port).c_str(), &hints, &list);
    if (rc != 0) {
      last_error = fmt::format("cannot resolve '{}': {}", master_addr, gai_strerror(rc));
    } else {
      for (addrinfo* ai = list; ai && !conn.valid(); ai = ai->ai_next) {
        auto s = TryConnect(ai, std::min(deadline, Clock::now() + kHelloWait));
        if (s.ok()) {
          conn = std::move(*s);
        } else {
          last_error = s.status().message();
        }
      }
      freeaddrinfo(list);
    }
    if (!conn.valid()) std::this_thread::sleep_for(kRetryPause);
  }
  SetNoDelay(conn.fd());
  const std::string peer = "rank 0 at " + where;
  COMMLENS_RETURN_IF_ERROR(SendFrame(conn.fd(), kHello, static_cast<uint32_t>(rank),
                                     static_cast<uint32_t>(world), {}, deadline, peer));
  auto ready = Expect(conn.fd(), kReady, deadline, peer);
  if (!ready.ok()) {
    const std::string& m = ready.status().message();
    if (m.find("reported by rank 0") != std::string::npos) return ready.status();
    return ExitCodeFor(ready.status()) == ExitCode::kTimeout
               ? TimeoutError(fmt::format("rank {}: rank 0 at {} did not report all {} ranks "
                                          "joined within {}",
                                          rank, where, world, Seconds(timeout)))
               : ready.status();
  }
  std::vector<Socket> peers;
  peers.push_back(std::move(conn));
  return std::unique_ptr<TcpBootstrap>(new TcpBootstrap(rank, world, timeout, std::move(peers)));
}

Result<std::unique_ptr<TcpBootstrap>> TcpBootstrap::Create(const std::string& master_addr, int port,
                                                           int rank, int world,
                                                           milliseconds timeout) {
  if (rank != 0) return Join(master_addr, port, rank, world, timeout);
  COMMLENS_ASSIGN_OR_RETURN(auto server, TcpRendezvousServer::Listen(port));
  return server->Accept(world, timeout);
}

Status TcpBootstrap::Broadcast(std::span<std::byte> data) {
  const Deadline deadline = Clock::now() + timeout_;
  if (rank_ == 0) {
    for (int r = 1; r < world_; ++r)
      COMMLENS_RETURN_IF_ERROR(SendFrame(peers_[r].fd(), kData, 0, 0, data, deadline, RankName(r)));
    return OkStatus();
  }
  COMMLENS_ASSIGN_OR_RETURN(Frame f, Expect(peers_[0].fd(), kData, deadline, RankName(0)));
  if (f.payload.size() != data.size())
    return Error(fmt::format("broadcast: rank 0 sent {} bytes, rank {} expected {}",
                             f.payload.size(), rank_, data.size()));
  std::copy(f.payload.begin(), f.payload.end(), data.begin());
  return OkStatus();
}

Status TcpBootstrap::AllGather(std::span<const std::byte> mine, std::vector<std::byte>* all) {
  const Deadline deadline = Clock::now() + timeout_;
  const size_t n = mine.size();
  if (rank_ != 0) {
    COMMLENS_RETURN_IF_ERROR(SendFrame(peers_[0].fd(), kData, 0, 0, mine, deadline, RankName(0)));
    COMMLENS_ASSIGN_OR_RETURN(Frame f, Expect(peers_[0].fd(), kData, deadline, RankName(0)));
    if (f.payload.size() != n * world_)
      return Error(fmt::format("all-gather: rank 0 sent {} bytes, expected {}", f.payload.size(),
                               n * world_));
    *all = std::move(f.payload);
    return OkStatus();
  }
  all->assign(n * world_, std::byte{0});
  std::copy(mine.begin(), mine.end(), all->begin());
  for (int r = 1; r < world_; ++r) {
    COMMLENS_ASSIGN_OR_RETURN(Frame f, Expect(peers_[r].fd(), kData, deadline, RankName(r)));
    if (f.payload.size() != n)
      return Error(fmt::format("all-gather: rank {} sent {} bytes, rank 0 expected {}", r,
                               f.payload.size(), n));
    std::copy(f.payload.begin(), f.payload.end(), all->begin() + r * n);
  }
  for (int r = 1; r < world_; ++r)
    COMMLENS_RETURN_IF_ERROR(SendFrame(peers_[r].fd(), kData, 0, 0, *all, deadline, RankName(r)));
  return OkStatus();
}

}  // namespace commlens::bench
