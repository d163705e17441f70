#include "model/collective.h"

#include <gtest/gtest.h>

#include "model/bus_bandwidth.h"

namespace commlens::model {
namespace {

TEST(Collective, PyTorchNames) {
  EXPECT_EQ(CommOpFromPyTorchName("allreduce"), CommOp::kAllReduce);
  EXPECT_EQ(CommOpFromPyTorchName("allreduce_coalesced"), CommOp::kAllReduce);
  EXPECT_EQ(CommOpFromPyTorchName("_allgather_base"), CommOp::kAllGather);
  EXPECT_EQ(CommOpFromPyTorchName("all_gather_into_tensor_coalesced"), CommOp::kAllGather);
  EXPECT_EQ(CommOpFromPyTorchName("_reduce_scatter_base"), CommOp::kReduceScatter);
  EXPECT_EQ(CommOpFromPyTorchName("reduce_scatter_tensor_coalesced"), CommOp::kReduceScatter);
  EXPECT_EQ(CommOpFromPyTorchName("all_to_all"), CommOp::kAllToAll);
  EXPECT_EQ(CommOpFromPyTorchName("all_to_allv"), CommOp::kAllToAll);
  EXPECT_EQ(CommOpFromPyTorchName("broadcast"), CommOp::kBroadcast);
  EXPECT_EQ(CommOpFromPyTorchName("reduce"), CommOp::kReduce);
  EXPECT_EQ(CommOpFromPyTorchName("send"), CommOp::kSend);
  EXPECT_EQ(CommOpFromPyTorchName("recv"), CommOp::kRecv);
  EXPECT_EQ(CommOpFromPyTorchName("barrier"), CommOp::kBarrier);
  EXPECT_EQ(CommOpFromPyTorchName("frobnicate"), CommOp::kUnknown);
}

TEST(Collective, NcclKernelNames) {
  EXPECT_EQ(CommOpFromNcclKernelName("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), CommOp::kAllReduce);
  EXPECT_EQ(CommOpFromNcclKernelName("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"),
            CommOp::kReduceScatter);
  EXPECT_EQ(CommOpFromNcclKernelName("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"),
            CommOp::kSendRecv);
  EXPECT_EQ(CommOpFromNcclKernelName("ncclDevKernel_Reduce_Sum_f32_RING_LL"), CommOp::kReduce);
  EXPECT_EQ(CommOpFromNcclKernelName("void gemm_kernel<float>()"), CommOp::kUnknown);
}

TEST(Collective, BusBandwidthFactorsMatchNcclTests) {
  EXPECT_DOUBLE_EQ(BusBwFactor(CommOp::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(BusBwFactor(CommOp::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(BusBwFactor(CommOp::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(BusBwFactor(CommOp::kAllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(BusBwFactor(CommOp::kBroadcast, 4), 1.0);
  EXPECT_DOUBLE_EQ(BusBwFactor(CommOp::kSend, 2), 1.0);
  EXPECT_DOUBLE_EQ(BusBwFactor(CommOp::kBarrier, 4), 0.0);
  EXPECT_DOUBLE_EQ(BusBwFactor(CommOp::kAllReduce, 0), 0.0);
}

TEST(Collective, NamesRoundTrip) {
  for (int i = 0; i < static_cast<int>(CommOp::kCount); ++i) {
    auto op = static_cast<CommOp>(i);
    EXPECT_EQ(CommOpFromName(CommOpName(op)), op);
  }
}

TEST(Collective, DataTypeSizes) {
  EXPECT_EQ(DataTypeSize("Float"), 4);
  EXPECT_EQ(DataTypeSize("BFloat16"), 2);
  EXPECT_EQ(DataTypeSize("ncclFloat32"), 4);
  EXPECT_EQ(DataTypeSize("ncclBfloat16"), 2);
  EXPECT_EQ(DataTypeSize("Long"), 8);
  EXPECT_EQ(DataTypeSize("Byte"), 1);
  EXPECT_EQ(DataTypeSize("mystery"), 0);
}

}  // namespace
}  // namespace commlens::model
