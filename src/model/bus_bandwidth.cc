#include "model/bus_bandwidth.h"

namespace commlens::model {

double BusBwFactor(CommOp op, int n) {
  if (n <= 0) return 0.0;
  switch (op) {
    case CommOp::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CommOp::kAllGather:
    case CommOp::kReduceScatter:
    case CommOp::kAllToAll:
    case CommOp::kGather:
    case CommOp::kScatter:
      return static_cast<double>(n - 1) / n;
    case CommOp::kBroadcast:
    case CommOp::kReduce:
    case CommOp::kSend:
    case CommOp::kRecv:
    case CommOp::kSendRecv:
      return 1.0;
    default:
      return 0.0;
  }
}

}  // namespace commlens::model
