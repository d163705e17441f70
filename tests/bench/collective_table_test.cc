#include "bench/collective_table.h"

#include <gtest/gtest.h>

namespace commlens::bench {
namespace {

using model::CommOp;

const CollectiveSpec& Spec(std::string_view name) {
  const CollectiveSpec* s = FindCollective(name);
  EXPECT_NE(s, nullptr) << name;
  return *s;
}

TEST(CollectiveTable, NamesInEverySpelling) {
  EXPECT_EQ(Spec("all_reduce").op, CommOp::kAllReduce);
  EXPECT_EQ(Spec("allreduce").op, CommOp::kAllReduce);
  EXPECT_EQ(Spec("alltoall").op, CommOp::kAllToAll);
  EXPECT_EQ(Spec("all_to_all").op, CommOp::kAllToAll);
  EXPECT_EQ(Spec("sendrecv").op, CommOp::kSendRecv);
  EXPECT_EQ(Spec("reduce_scatter").op, CommOp::kReduceScatter);
  EXPECT_EQ(Spec("reduce").op, CommOp::kReduce);
  EXPECT_EQ(FindCollective("gather_everything"), nullptr);
  EXPECT_EQ(FindCollective(CommOp::kBarrier), nullptr);
  EXPECT_EQ(Collectives().size(), 7u);
}

// Sizes and counts as nccl-tests 2.19.6 prints them for 4 ranks and float (4 bytes).
TEST(CollectiveTable, CountsMatchNccltests) {
  const int n = 4, e = 4;
  CollCounts ar = Spec("all_reduce").counts(1024 / e, e, n);
  EXPECT_EQ(ar.param, 256);
  EXPECT_EQ(ar.SizeBytes(e), 1024);

  // all_gather: per-rank count, rounded down to 16 bytes; size = total receive buffer.
  CollCounts ag = Spec("all_gather").counts(1024 / e, e, n);
  EXPECT_EQ(ag.param, 64);
  EXPECT_EQ(ag.send, 64);
  EXPECT_EQ(ag.recv, 256);
  EXPECT_EQ(ag.SizeBytes(e), 1024);
  EXPECT_EQ(ag.send_inplace_offset, 64);
  // 8 bytes over 4 ranks rounds to nothing; 100 bytes to 16 bytes per rank.
  EXPECT_EQ(Spec("all_gather").counts(2, e, n).SizeBytes(e), 0);
  EXPECT_EQ(Spec("all_gather").counts(25, e, n).SizeBytes(e), 64);

  CollCounts rs = Spec("reduce_scatter").counts(1024 / e, e, n);
  EXPECT_EQ(rs.param, 64);
  EXPECT_EQ(rs.send, 256);
  EXPECT_EQ(rs.recv, 64);
  EXPECT_EQ(rs.recv_inplace_offset, 64);

  CollCounts a2a = Spec("alltoall").counts(1024 / e, e, n);
  EXPECT_EQ(a2a.param, 64);
  EXPECT_EQ(a2a.send, 256);
  EXPECT_EQ(a2a.recv, 256);

  for (const char* name : {"broadcast", "reduce", "sendrecv"}) {
    CollCounts c = Spec(name).counts(1000, e, n);
    EXPECT_EQ(c.param, 1000) << name;
    EXPECT_EQ(c.SizeBytes(e), 4000) << name;
  }
}

TEST(CollectiveTable, BusBwFactorsComeFromTheModel) {
  EXPECT_DOUBLE_EQ(Spec("all_reduce").BusBwFactor(4), 1.5);
  EXPECT_DOUBLE_EQ(Spec("all_gather").BusBwFactor(4), 0.75);
  EXPECT_DOUBLE_EQ(Spec("reduce_scatter").BusBwFactor(8), 0.875);
  EXPECT_DOUBLE_EQ(Spec("alltoall").BusBwFactor(4), 0.75);
  EXPECT_DOUBLE_EQ(Spec("broadcast").BusBwFactor(4), 1.0);
  EXPECT_DOUBLE_EQ(Spec("reduce").BusBwFactor(4), 1.0);
  EXPECT_DOUBLE_EQ(Spec("sendrecv").BusBwFactor(4), 1.0);
}

TEST(CollectiveTable, ExpectPlansDescribeTheDataMovement) {
  const int n = 4;
  CollCounts ag = Spec("all_gather").counts(256, 4, n);
  ExpectPlan p = Spec("all_gather").expect(ag, 2, n, 0);
  EXPECT_FALSE(p.reduce);
  EXPECT_EQ(p.chunk, 64);  // output j comes from rank j / 64, element j % 64

  CollCounts rs = Spec("reduce_scatter").counts(256, 4, n);
  p = Spec("reduce_scatter").expect(rs, 3, n, 0);
  EXPECT_TRUE(p.reduce);
  EXPECT_EQ(p.src_offset, 3 * 64);  // rank 3 reduces the fourth slice

  CollCounts a2a = Spec("alltoall").counts(256, 4, n);
  p = Spec("alltoall").expect(a2a, 1, n, 0);
  EXPECT_EQ(p.chunk, 64);
  EXPECT_EQ(p.src_offset, 64);  // from each peer, the slice addressed to rank 1

  p = Spec("sendrecv").expect(Spec("sendrecv").counts(10, 4, n), 0, n, 0);
  EXPECT_EQ(p.src_rank, 3);  // ring: rank 0 receives from rank 3
  p = Spec("broadcast").expect(Spec("broadcast").counts(10, 4, n), 2, n, 1);
  EXPECT_EQ(p.src_rank, 1);
  EXPECT_FALSE(Spec("reduce").expect(Spec("reduce").counts(10, 4, n), 2, n, 1).checked);
  EXPECT_TRUE(Spec("reduce").expect(Spec("reduce").counts(10, 4, n), 1, n, 1).checked);
  EXPECT_FALSE(Spec("alltoall").in_place_verifiable);
  EXPECT_FALSE(Spec("sendrecv").in_place_verifiable);
  EXPECT_TRUE(Spec("all_gather").in_place_verifiable);
}

}  // namespace
}  // namespace commlens::bench
