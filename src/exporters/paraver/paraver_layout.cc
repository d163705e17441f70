#include "exporters/paraver/paraver_layout.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

namespace commlens::exporters::paraver {

namespace {

// Sorts |rows| by (start, longer first, row) given their start and end columns.
void SortRows(std::vector<uint32_t>* rows, const std::vector<model::TimeNs>& start,
              const std::vector<model::TimeNs>& end) {
  std::sort(rows->begin(), rows->end(), [&](uint32_t a, uint32_t b) {
    if (start[a] != start[b]) return start[a] < start[b];
    if (end[a] != end[b]) return end[a] > end[b];
    return a < b;
  });
}

}  // namespace

Layout::Layout(const model::Trace& trace, const Selection& selection) : trace_(trace), selection_(selection) {
  origin_ = std::numeric_limits<model::TimeNs>::max();
  model::TimeNs last = std::numeric_limits<model::TimeNs>::min();
  for (uint32_t r = 0; r < trace.ranks.size(); ++r) {
    first_thread_.push_back(static_cast<uint32_t>(threads_.size()));
    AddRank(r);
  }
  first_thread_.push_back(static_cast<uint32_t>(threads_.size()));

  std::unordered_map<std::string, uint32_t> index;
  name_value_.resize(trace.ranks.size());
  for (const Thread& t : threads_) {
    if (t.rows.empty()) continue;
    const model::RankTrace& rank = trace.ranks[t.rank_index];
    const auto& start = t.comm_ops ? rank.comms.start : rank.gpu.start;
    const auto& end = t.comm_ops ? rank.comms.end : rank.gpu.end;
    origin_ = std::min(origin_, start[t.rows.front()]);
    for (uint32_t row : t.rows) last = std::max(last, std::max(start[row], end[row]));
    has_rows_ = true;
    NameRows(t, &index);
  }
  if (!has_rows_) origin_ = last = 0;
  end_ = last - origin_;
}

uint32_t Layout::Intern(std::string name, std::unordered_map<std::string, uint32_t>* index) {
  auto [it, added] = index->emplace(name, static_cast<uint32_t>(names_.size() + 1));
  if (added) names_.push_back(std::move(name));
  return it->second;
}

// Values in order of first appearance (ranks, then threads, then time): the same trace
// always gives the same table.
void Layout::NameRows(const Thread& t, std::unordered_map<std::string, uint32_t>* index) {
  const model::RankTrace& rank = trace_.ranks[t.rank_index];
  if (t.comm_ops) {
    for (uint32_t row : t.rows) {
      uint32_t& value = op_name_value_[static_cast<size_t>(rank.comms.op[row])];
      if (value == 0) value = Intern("NCCL " + std::string(model::CommOpName(rank.comms.op[row])), index);
    }
    return;
  }
  std::vector<uint32_t>& values = name_value_[t.rank_index];
  if (values.empty()) values.assign(rank.strings.size(), 0);
  for (uint32_t row : t.rows) {
    model::StringId id = rank.gpu.name[row];
    if (values[id.value] == 0) values[id.value] = Intern(std::string(rank.strings.Get(id)), index);
  }
}

void Layout::AddRank(uint32_t rank_index) {
  const model::RankTrace& rank = trace_.ranks[rank_index];
  std::map<std::pair<int32_t, int32_t>, std::vector<uint32_t>> streams;
  for (uint32_t i = 0; i < rank.gpu.size(); ++i)
    if (selection_.Gpu(rank_index, i)) streams[{rank.gpu.device[i], rank.gpu.stream[i]}].push_back(i);
  std::vector<uint32_t> ops;
  for (uint32_t i = 0; i < rank.comms.size(); ++i)
    if (rank.comms.activity[i] == model::kNoIndex && selection_.Comm(rank_index, i)) ops.push_back(i);

  const uint32_t task = rank_index + 1;
  uint32_t n = 0;
  for (auto& [key, rows] : streams) {
    Thread t{rank_index, task, ++n, key.first, key.second, false, std::move(rows)};
    SortRows(&t.rows, rank.gpu.start, rank.gpu.end);
    threads_.push_back(std::move(t));
  }
  if (!ops.empty()) {
    Thread t{rank_index, task, ++n, -1, -1, true, std::move(ops)};
    SortRows(&t.rows, rank.comms.start, rank.comms.end);
    threads_.push_back(std::move(t));
  }
  if (n == 0) threads_.push_back(Thread{rank_index, task, 1, -1, -1, false, {}});
}

std::optional<OpPlace> Layout::PlaceOf(uint32_t rank_index, uint32_t row) const {
  if (!selection_.Comm(rank_index, row)) return std::nullopt;
  const model::RankTrace& rank = trace_.ranks[rank_index];
  const uint32_t activity = rank.comms.activity[row];
  for (uint32_t t = first_thread_[rank_index]; t < first_thread_[rank_index + 1]; ++t) {
    const Thread& th = threads_[t];
    if (activity == model::kNoIndex && th.comm_ops)
      return OpPlace{t, rank.comms.start[row], rank.comms.end[row]};
    if (activity != model::kNoIndex && !th.comm_ops && th.device == rank.gpu.device[activity] &&
        th.stream == rank.gpu.stream[activity])
      return OpPlace{t, rank.gpu.start[activity], rank.gpu.end[activity]};
  }
  return std::nullopt;
}

std::string TaskLabel(const model::RankTrace& rank) {
  std::string label = "rank " + std::to_string(rank.rank);
  if (!rank.hostname.empty()) label += " (" + rank.hostname + ")";
  return label;
}

std::string ThreadLabel(const model::RankTrace& rank, const Thread& thread) {
  std::string label = "rank " + std::to_string(rank.rank);
  if (thread.comm_ops) return label + " NCCL ops";
  if (thread.placeholder()) return label + " (no GPU activity)";
  return label + " GPU " + std::to_string(thread.device) + " stream " + std::to_string(thread.stream);
}

}  // namespace commlens::exporters::paraver
