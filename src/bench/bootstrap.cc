#include "bench/bootstrap.h"

#include <algorithm>
#include <cstring>

namespace commlens::bench {

Status Bootstrap::Barrier() {
  std::byte token{1};
  std::vector<std::byte> all;
  return AllGather(std::span<const std::byte>(&token, 1), &all);
}

Result<std::vector<double>> AllGatherDoubles(Bootstrap& b, std::span<const double> mine) {
  std::vector<std::byte> all;
  COMMLENS_RETURN_IF_ERROR(b.AllGather(std::as_bytes(mine), &all));
  std::vector<double> out(all.size() / sizeof(double));
  std::memcpy(out.data(), all.data(), out.size() * sizeof(double));
  return out;
}

Result<double> AllReduceSum(Bootstrap& b, double value) {
  COMMLENS_ASSIGN_OR_RETURN(std::vector<double> all, AllGatherDoubles(b, {&value, 1}));
  double sum = 0;
  for (double v : all) sum += v;
  return sum;
}

Result<int64_t> AllReduceSum(Bootstrap& b, int64_t value) {
  std::vector<std::byte> all;
  COMMLENS_RETURN_IF_ERROR(b.AllGather(std::as_bytes(std::span<const int64_t>(&value, 1)), &all));
  int64_t sum = 0;
  for (size_t i = 0; i + sizeof(int64_t) <= all.size(); i += sizeof(int64_t)) {
    int64_t v;
    std::memcpy(&v, all.data() + i, sizeof v);
    sum += v;
  }
  return sum;
}

Result<std::vector<double>> AllReduceMax(Bootstrap& b, std::span<const double> mine) {
  COMMLENS_ASSIGN_OR_RETURN(std::vector<double> all, AllGatherDoubles(b, mine));
  std::vector<double> out(all.begin(), all.begin() + mine.size());  // rank 0's
  for (size_t r = 1; r < static_cast<size_t>(b.size()); ++r)
    for (size_t i = 0; i < out.size(); ++i) out[i] = std::max(out[i], all[r * out.size() + i]);
  return out;
}

Result<std::vector<std::string>> AllGatherStrings(Bootstrap& b, const std::string& mine) {
  int64_t length = static_cast<int64_t>(mine.size());
  std::vector<std::byte> lengths_raw;
  COMMLENS_RETURN_IF_ERROR(
      b.AllGather(std::as_bytes(std::span<const int64_t>(&length, 1)), &lengths_raw));
  std::vector<int64_t> lengths(lengths_raw.size() / sizeof(int64_t));
  std::memcpy(lengths.data(), lengths_raw.data(), lengths.size() * sizeof(int64_t));
  int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<std::byte> padded(static_cast<size_t>(longest));
  std::memcpy(padded.data(), mine.data(), mine.size());
  std::vector<std::byte> all;
  COMMLENS_RETURN_IF_ERROR(b.AllGather(padded, &all));
  std::vector<std::string> out;
  for (size_t r = 0; r < lengths.size(); ++r)
    out.emplace_back(reinterpret_cast<const char*>(all.data()) + r * longest, lengths[r]);
  return out;
}

}  // namespace commlens::bench
