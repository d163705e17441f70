// A worker's encoded files between its import threads and its main thread, the one that
// calls MPI. Push blocks while |capacity| messages wait, so a worker's memory stays
// bounded whatever its share.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

namespace commlens::distributed {

class Outbox {
 public:
  explicit Outbox(size_t capacity) : capacity_(std::max<size_t>(1, capacity)) {}

  void Push(std::vector<uint8_t> message) {
    std::unique_lock lock(mu_);
    room_.wait(lock, [&] { return items_.size() < capacity_; });
    items_.push_back(std::move(message));
    ready_.notify_one();
  }
  // No message will come after this.
  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    ready_.notify_one();
  }
  // A message, or none after |wait|; |*finished| once none will come.
  std::optional<std::vector<uint8_t>> Pop(std::chrono::microseconds wait, bool* finished) {
    std::unique_lock lock(mu_);
    ready_.wait_for(lock, wait, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) {
      *finished = closed_;
      return std::nullopt;
    }
    std::vector<uint8_t> message = std::move(items_.front());
    items_.pop_front();
    room_.notify_one();
    return message;
  }

 private:
  size_t capacity_;
  std::mutex mu_;
  std::condition_variable ready_, room_;
  std::deque<std::vector<uint8_t>> items_;
  bool closed_ = false;
};

}  // namespace commlens::distributed
