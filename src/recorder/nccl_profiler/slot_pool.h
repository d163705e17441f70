// A fixed ring of event slots, allocated once (communicator init) and never resized.
//
// Each slot moves Free -> Open (claimed by the thread that started the event) -> Done
// (stopped) -> Free (drained by the flusher, or released directly by its owner for
// events that are folded into another). Claims take the next slot in ring order; if it
// is not Free the pool is full and the event is dropped (the caller counts it). Nothing
// on these paths locks, allocates or makes a system call.
//
// Threading contract: an Open slot is touched only by the thread(s) NCCL uses for that
// event's start/record/stop, which NCCL never runs concurrently for one event; a Done
// slot only by the flusher. The state word hands a slot from one to the other
// (release on the writer's side, acquire on the reader's).
//
// Memory comes from calloc, so untouched slots cost no resident memory; T must be a
// plain struct (zero bytes are its empty state).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <type_traits>

namespace commlens::recorder {

template <typename T>
class SlotPool {
 public:
  static_assert(std::is_trivially_copyable_v<T>);
  enum : uint32_t { kFree = 0, kOpen = 1, kDone = 2 };
  struct Slot {
    uint32_t state;
    uint32_t generation;
    T data;
  };

  SlotPool() = default;
  SlotPool(const SlotPool&) = delete;
  SlotPool& operator=(const SlotPool&) = delete;
  ~SlotPool() { std::free(slots_); }

  // Capacity is rounded up to a power of two. False if memory is short.
  bool Allocate(uint32_t capacity) {
    uint32_t cap = 1;
    while (cap < capacity) cap <<= 1;
    slots_ = static_cast<Slot*>(std::calloc(cap, sizeof(Slot)));
    if (slots_ == nullptr) return false;
    mask_ = cap - 1;
    return true;
  }
  uint32_t capacity() const { return mask_ + 1; }

  // Hot path. Returns the claimed slot (now Open) and its index, or nullptr when full.
  Slot* Claim(uint32_t* index) {
    uint64_t n = head_.fetch_add(1, std::memory_order_relaxed);
    Slot* s = &slots_[n & mask_];
    uint32_t expected = kFree;
    if (!State(s).compare_exchange_strong(expected, kOpen, std::memory_order_acquire,
                                          std::memory_order_relaxed)) {
      return nullptr;
    }
    *index = static_cast<uint32_t>(n & mask_);
    return s;
  }

  // Hot path. The slot |index| if it is Open with generation |gen|, else nullptr (a
  // stale or foreign handle).
  Slot* FindOpen(uint32_t index, uint32_t gen) {
    if (index > mask_) return nullptr;
    Slot* s = &slots_[index];
    if (State(s).load(std::memory_order_acquire) != kOpen) return nullptr;
    if (Generation(s).load(std::memory_order_relaxed) != gen) return nullptr;
    return s;
  }
  uint32_t GenerationOf(Slot* s) { return Generation(s).load(std::memory_order_relaxed); }

  // Open -> Done: the flusher may now read it.
  void MarkDone(Slot* s) { State(s).store(kDone, std::memory_order_release); }
  // Open or Done -> Free, with a new generation so old handles no longer match.
  void Release(Slot* s) {
    Generation(s).fetch_add(1, std::memory_order_relaxed);
    State(s).store(kFree, std::memory_order_release);
  }

  // Flusher: calls f(const T&) for every Done slot, then frees it. Returns how many.
  template <typename F>
  uint64_t DrainDone(F&& f) {
    uint64_t claimed = head_.load(std::memory_order_relaxed);
    uint64_t end = claimed < capacity() ? claimed : capacity();  // slots never claimed are Free
    uint64_t n = 0;
    for (uint64_t i = 0; i < end; ++i) {
      Slot* s = &slots_[i];
      if (State(s).load(std::memory_order_acquire) != kDone) continue;
      f(s->data);
      Release(s);
      ++n;
    }
    return n;
  }

 private:
  static std::atomic_ref<uint32_t> State(Slot* s) { return std::atomic_ref<uint32_t>(s->state); }
  static std::atomic_ref<uint32_t> Generation(Slot* s) {
    return std::atomic_ref<uint32_t>(s->generation);
  }

  Slot* slots_ = nullptr;
  uint32_t mask_ = 0;
  alignas(64) std::atomic<uint64_t> head_{0};
};

}  // namespace commlens::recorder
