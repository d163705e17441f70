#include "distributed/plan.h"

#include <algorithm>
#include <numeric>

#include "common/byte_codec.h"

namespace commlens::distributed {

std::vector<size_t> Plan::FilesOf(int process) const {
  std::vector<size_t> mine;
  for (size_t i = 0; i < files.size(); ++i)
    if (owner[i] == static_cast<uint64_t>(process)) mine.push_back(i);
  std::stable_sort(mine.begin(), mine.end(), [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  return mine;
}

Plan DealFiles(std::vector<std::string> files, std::vector<uint64_t> sizes, int processes) {
  Plan plan;
  plan.files = std::move(files);
  plan.sizes = std::move(sizes);
  plan.sizes.resize(plan.files.size(), 0);
  plan.owner.assign(plan.files.size(), 0);
  std::vector<size_t> order(plan.files.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return plan.sizes[a] > plan.sizes[b]; });
  std::vector<uint64_t> load(static_cast<size_t>(std::max(processes, 1)), 0);
  for (size_t i : order) {
    size_t p = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    plan.owner[i] = p;
    load[p] += plan.sizes[i] + 1;
    if (p != 0) load[0] += (plan.sizes[i] + 1) / 5;
  }
  return plan;
}

std::vector<uint8_t> EncodePlan(const Plan& plan) {
  std::vector<uint8_t> bytes;
  bytes.reserve(256);  // also keeps GCC 12 from a false -Wstringop-overflow on the first insert
  ByteWriter out(&bytes);
  out.Pod(uint64_t{plan.error.empty() ? 0u : 1u});
  if (!plan.error.empty()) {
    out.Str(plan.error);
    return bytes;
  }
  out.Count(plan.files.size());
  for (size_t i = 0; i < plan.files.size(); ++i) {
    out.Str(plan.files[i]);
    out.Pod(plan.sizes[i]);
    out.Pod(plan.owner[i]);
  }
  return bytes;
}

Plan DecodePlan(std::span<const uint8_t> bytes) {
  ByteReader in(bytes, "the plan from rank 0");
  Plan plan;
  if (in.Pod<uint64_t>() != 0) {
    plan.error = in.Str();
  } else {
    const size_t n = in.Count(3 * sizeof(uint64_t));  // a path's length, size, owner
    for (size_t i = 0; i < n && in.ok(); ++i) {
      plan.files.push_back(in.Str());
      plan.sizes.push_back(in.Pod<uint64_t>());
      plan.owner.push_back(in.Pod<uint64_t>());
    }
  }
  if (!in.ok() || in.left() != 0) {
    Plan damaged;
    damaged.error = "internal: the plan from rank 0 is damaged";
    return damaged;
  }
  return plan;
}

}  // namespace commlens::distributed
