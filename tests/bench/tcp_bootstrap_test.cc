// The TCP rendezvous over loopback: ranks are threads of this process.
#include "bench/tcp_bootstrap.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>

#include "bench/errors.h"

namespace commlens::bench {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kLong{20000};
constexpr milliseconds kShort{300};

Result<std::unique_ptr<TcpBootstrap>> JoinAsync(int port, int rank, int world, milliseconds t) {
  return TcpBootstrap::Join("127.0.0.1", port, rank, world, t);
}

// What each rank saw after the rendezvous.
struct Seen {
  std::vector<std::byte> id;
  std::vector<std::byte> gathered;
  double sum = 0;
  std::vector<double> max;
  std::vector<std::string> strings;
};

Result<Seen> Exchange(Bootstrap& b) {
  Seen s;
  s.id.assign(128, std::byte{0});
  if (b.rank() == 0)
    for (size_t i = 0; i < s.id.size(); ++i) s.id[i] = std::byte(i * 7 + 1);
  COMMLENS_RETURN_IF_ERROR(b.Broadcast(s.id));
  std::array<std::byte, 3> mine{std::byte(b.rank()), std::byte(b.rank() + 10), std::byte(0xAB)};
  COMMLENS_RETURN_IF_ERROR(b.AllGather(mine, &s.gathered));
  COMMLENS_ASSIGN_OR_RETURN(s.sum, AllReduceSum(b, 0.5 * (b.rank() + 1)));
  std::vector<double> v = {static_cast<double>(b.rank()), 10.0 - b.rank()};
  COMMLENS_ASSIGN_OR_RETURN(s.max, AllReduceMax(b, v));
  COMMLENS_ASSIGN_OR_RETURN(s.strings, AllGatherStrings(b, std::string(b.rank(), 'x')));
  COMMLENS_RETURN_IF_ERROR(b.Barrier());
  return s;
}

TEST(TcpBootstrap, RanksJoinAndExchange) {
  const int world = 4;
  auto server = TcpRendezvousServer::Listen(0);
  ASSERT_TRUE(server.ok()) << server.status().message();
  int port = (*server)->port();
  std::vector<std::future<Result<Seen>>> peers;
  for (int r = 1; r < world; ++r) {
    peers.push_back(std::async(std::launch::async, [port, r]() -> Result<Seen> {
      COMMLENS_ASSIGN_OR_RETURN(auto b, JoinAsync(port, r, world, kLong));
      return Exchange(*b);
    }));
  }
  auto root = (*server)->Accept(world, kLong);
  ASSERT_TRUE(root.ok()) << root.status().message();
  EXPECT_EQ((*root)->transport(), "tcp");
  Result<Seen> mine = Exchange(**root);
  ASSERT_TRUE(mine.ok()) << mine.status().message();
  std::vector<Result<Seen>> all;
  all.push_back(std::move(mine));
  for (auto& f : peers) all.push_back(f.get());
  for (int r = 0; r < world; ++r) {
    ASSERT_TRUE(all[r].ok()) << "rank " << r << ": " << all[r].status().message();
    const Seen& s = *all[r];
    EXPECT_EQ(s.id, all[0]->id);
    EXPECT_EQ(s.id[5], std::byte(36));
    ASSERT_EQ(s.gathered.size(), 3u * world);
    for (int q = 0; q < world; ++q) {
      EXPECT_EQ(s.gathered[3 * q], std::byte(q));
      EXPECT_EQ(s.gathered[3 * q + 1], std::byte(q + 10));
    }
    EXPECT_DOUBLE_EQ(s.sum, 0.5 * (1 + 2 + 3 + 4));
    EXPECT_EQ(s.max, (std::vector<double>{3, 10}));
    EXPECT_EQ(s.strings, (std::vector<std::string>{"", "x", "xx", "xxx"}));
  }
}

TEST(TcpBootstrap, MissingPeerEndsEveryRankWithATimeout) {
  auto server = TcpRendezvousServer::Listen(0);
  ASSERT_TRUE(server.ok());
  int port = (*server)->port();
  auto joined = std::async(std::launch::async, [port] { return JoinAsync(port, 1, 3, kLong); });
  auto root = (*server)->Accept(3, kShort);  // rank 2 never comes
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(ExitCodeFor(root.status()), ExitCode::kTimeout);
  EXPECT_NE(root.status().message().find("1 of 2 other ranks joined"), std::string::npos)
      << root.status().message();
  EXPECT_NE(root.status().message().find("missing ranks: 2"), std::string::npos);
  auto peer = joined.get();  // told by rank 0, well before its own 20 s
  ASSERT_FALSE(peer.ok());
  EXPECT_EQ(ExitCodeFor(peer.status()), ExitCode::kTimeout);
  EXPECT_NE(peer.status().message().find("reported by rank 0"), std::string::npos);
}

TEST(TcpBootstrap, AbsentRootEndsWithATimeout) {
  int port = 0;
  {
    auto probe = TcpRendezvousServer::Listen(0);  // find a port nobody listens on after
    ASSERT_TRUE(probe.ok());
    port = (*probe)->port();
  }
  auto r = JoinAsync(port, 1, 2, kShort);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(ExitCodeFor(r.status()), ExitCode::kTimeout);
  EXPECT_NE(r.status().message().find("could not connect to rank 0 at 127.0.0.1"),
            std::string::npos)
      << r.status().message();
}

TEST(TcpBootstrap, UnresolvableMasterEndsWithATimeoutNamingIt) {
  auto r = TcpBootstrap::Join("no-such-host.invalid", 29500, 1, 2, kShort);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no-such-host.invalid"), std::string::npos);
}

TEST(TcpBootstrap, WorldSizeMismatchIsAUsageError) {
  auto server = TcpRendezvousServer::Listen(0);
  ASSERT_TRUE(server.ok());
  int port = (*server)->port();
  auto joined = std::async(std::launch::async, [port] { return JoinAsync(port, 1, 3, kLong); });
  auto root = (*server)->Accept(2, kLong);
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(ExitCodeFor(root.status()), ExitCode::kUsage);
  EXPECT_NE(root.status().message().find("world size 3"), std::string::npos);
  auto peer = joined.get();
  ASSERT_FALSE(peer.ok());
  EXPECT_EQ(ExitCodeFor(peer.status()), ExitCode::kUsage);
}

TEST(TcpBootstrap, DuplicateRankIsRejected) {
  auto server = TcpRendezvousServer::Listen(0);
  ASSERT_TRUE(server.ok());
  int port = (*server)->port();
  auto a = std::async(std::launch::async, [port] { return JoinAsync(port, 1, 3, kLong); });
  auto b = std::async(std::launch::async, [port] { return JoinAsync(port, 1, 3, kLong); });
  auto root = (*server)->Accept(3, kLong);
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.status().message().find("two processes claim rank 1"), std::string::npos);
  EXPECT_FALSE(a.get().ok());
  EXPECT_FALSE(b.get().ok());
}

TEST(TcpBootstrap, StrayConnectionsAreIgnored) {
  auto server = TcpRendezvousServer::Listen(0);
  ASSERT_TRUE(server.ok());
  int port = (*server)->port();
  // Something that is not a commlens peer connects and sends garbage first.
  int stray = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(stray, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  const char junk[32] = "GET / HTTP/1.0\r\n\r\n";
  ASSERT_GT(::send(stray, junk, sizeof junk, 0), 0);
  auto joined = std::async(std::launch::async, [port] { return JoinAsync(port, 1, 2, kLong); });
  auto root = (*server)->Accept(2, kLong);
  ::close(stray);
  ASSERT_TRUE(root.ok()) << root.status().message();
  ASSERT_TRUE(joined.get().ok());
}

TEST(TcpBootstrap, PeerThatDiesLaterIsAnErrorNotAHang) {
  auto server = TcpRendezvousServer::Listen(0);
  ASSERT_TRUE(server.ok());
  int port = (*server)->port();
  auto joined = std::async(std::launch::async, [port] { return JoinAsync(port, 1, 2, kLong); });
  auto root = (*server)->Accept(2, kLong);
  ASSERT_TRUE(root.ok());
  {
    auto peer = joined.get();
    ASSERT_TRUE(peer.ok());
  }  // rank 1 exits: its socket closes
  Status s = (*root)->Barrier();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rank 1 closed the connection"), std::string::npos) << s.message();
}

TEST(TcpBootstrap, SilentPeerTimesOut) {
  auto server = TcpRendezvousServer::Listen(0);
  ASSERT_TRUE(server.ok());
  int port = (*server)->port();
  auto joined =
      std::async(std::launch::async, [port] { return JoinAsync(port, 1, 2, kShort); });
  auto root = (*server)->Accept(2, kShort);
  ASSERT_TRUE(root.ok());
  auto peer = joined.get();
  ASSERT_TRUE(peer.ok());
  // Rank 1 is alive but never takes part: rank 0's barrier gives up after the timeout.
  Status s = (*root)->Barrier();
  EXPECT_EQ(ExitCodeFor(s), ExitCode::kTimeout) << s.message();
}

}  // namespace
}  // namespace commlens::bench
