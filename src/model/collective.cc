#include "model/collective.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "common/strings.h"

namespace commlens::model {

namespace {

constexpr std::array<std::string_view, static_cast<size_t>(CommOp::kCount)> kNames = {
    "unknown", "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast",
    "reduce",  "send",       "recv",       "send_recv",      "gather",     "scatter",
    "barrier"};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string_view CommOpName(CommOp op) {
  size_t i = static_cast<size_t>(op);
  return i < kNames.size() ? kNames[i] : kNames[0];
}

CommOp CommOpFromName(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<CommOp>(i);
  return CommOp::kUnknown;
}

CommOp CommOpFromPyTorchName(std::string_view raw) {
  // PyTorch names vary by version and by API: strip leading underscores and the
  // "_coalesced"/"_base"/"_into_tensor" decorations, then compare without separators.
  std::string s = Lower(raw);
  std::string key;
  for (char c : s)
    if (c != '_') key.push_back(c);
  auto starts = [&](std::string_view p) { return key.rfind(p, 0) == 0; };
  if (starts("allreduce")) return CommOp::kAllReduce;
  if (starts("allgather")) return CommOp::kAllGather;
  if (starts("reducescatter")) return CommOp::kReduceScatter;
  if (starts("alltoall")) return CommOp::kAllToAll;
  if (starts("broadcast")) return CommOp::kBroadcast;
  if (starts("reduce")) return CommOp::kReduce;
  if (starts("sendrecv")) return CommOp::kSendRecv;
  if (starts("send")) return CommOp::kSend;
  if (starts("recv")) return CommOp::kRecv;
  if (starts("gather")) return CommOp::kGather;
  if (starts("scatter")) return CommOp::kScatter;
  if (starts("barrier")) return CommOp::kBarrier;
  return CommOp::kUnknown;
}

CommOp CommOpFromNcclFunc(std::string_view func) { return CommOpFromPyTorchName(func); }

CommOp CommOpFromNcclKernelName(std::string_view kernel) {
  // Order matters: "AllReduce" contains "Reduce", "ReduceScatter" contains "Reduce".
  if (!Contains(kernel, "nccl")) return CommOp::kUnknown;
  if (Contains(kernel, "AllReduce")) return CommOp::kAllReduce;
  if (Contains(kernel, "AllGather")) return CommOp::kAllGather;
  if (Contains(kernel, "ReduceScatter")) return CommOp::kReduceScatter;
  if (Contains(kernel, "AllToAll") || Contains(kernel, "Alltoall")) return CommOp::kAllToAll;
  if (Contains(kernel, "Broadcast")) return CommOp::kBroadcast;
  if (Contains(kernel, "SendRecv")) return CommOp::kSendRecv;
  if (Contains(kernel, "_Send")) return CommOp::kSend;
  if (Contains(kernel, "_Recv")) return CommOp::kRecv;
  if (Contains(kernel, "_Reduce")) return CommOp::kReduce;
  return CommOp::kUnknown;
}

bool IsPointToPoint(CommOp op) {
  return op == CommOp::kSend || op == CommOp::kRecv || op == CommOp::kSendRecv;
}

int DataTypeSize(std::string_view dtype) {
  std::string s = Lower(dtype);
  if (s.rfind("nccl", 0) == 0) s = s.substr(4);
  if (s.rfind("torch.", 0) == 0) s = s.substr(6);
  struct Entry {
    std::string_view name;
    int size;
  };
  static constexpr Entry kTypes[] = {
      {"float", 4},   {"float32", 4},  {"f32", 4},     {"double", 8},   {"float64", 8},
      {"f64", 8},     {"half", 2},     {"float16", 2}, {"f16", 2},      {"bfloat16", 2},
      {"bf16", 2},    {"int8", 1},     {"i8", 1},      {"char", 1},     {"uint8", 1},
      {"u8", 1},      {"byte", 1},     {"bool", 1},    {"int", 4},      {"int32", 4},
      {"i32", 4},     {"uint32", 4},   {"u32", 4},     {"long", 8},     {"int64", 8},
      {"i64", 8},     {"uint64", 8},   {"u64", 8},     {"short", 2},    {"int16", 2},
      {"float8_e4m3fn", 1}, {"float8_e5m2", 1}, {"fp8e4m3", 1}, {"fp8e5m2", 1}, {"f8e4m3", 1},
      {"f8e5m2", 1},  {"complexfloat", 8}, {"complexdouble", 16}};
  for (const Entry& e : kTypes)
    if (e.name == s) return e.size;
  return 0;
}

}  // namespace commlens::model
