// A fixed pool of event slots, allocated once (communicator init) and never resized.
//
// Each slot moves Free -> Open (claimed by the thread that started the event) -> Done
// (stopped) -> Free (drained by the flusher, or released directly by its owner for
// events that are folded into another). A claim takes a freed slot from a lock-free
// stack, or else the next slot never used yet; it fails only when no slot is Free, and
// the event is then dropped (the caller counts it). So an event that stays open for long
// (a stalled proxy op) holds its own slot and blocks no other: there is no ring order in
// which it could be in the way. Nothing on these paths locks, allocates or makes a
// system call.
//
// The free stack is a Treiber stack of slot indexes; its head packs the top index with
// a tag bumped on every change, so a claim that read a stale top cannot succeed (ABA).
// Freed slots are reused last-in first-out, which keeps the pool's working set small.
//
// Threading contract: an Open slot is touched only by the thread(s) NCCL uses for that
// event's start/record/stop, which NCCL never runs concurrently for one event; a Done
// slot only by the flusher. The state word hands a slot from one to the other
// (release on the writer's side, acquire on the reader's); the stack head hands a freed
// slot to its next owner the same way.
//
// Memory comes from calloc, so untouched slots cost no resident memory; T must be a
// plain struct (zero bytes are its empty state).
//
// Generations count from a base (Allocate's |generation_base|): a pool that follows
// another in the same token space (a communicator reusing a finalized one's registry
// index) starts above every generation the other gave out, so that no token of the two
// is the same. A slot stores its generation less the base.
#pragma once

#include <algorithm>
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
    uint32_t next_free;  // while on the free stack: the slot below it, or kNone
    T data;
  };

  SlotPool() = default;
  SlotPool(const SlotPool&) = delete;
  SlotPool& operator=(const SlotPool&) = delete;
  ~SlotPool() { std::free(slots_); }

  // Capacity is rounded up to a power of two. False if memory is short.
  bool Allocate(uint32_t capacity, uint32_t generation_base = 0) {
    base_ = generation_base;
    uint32_t cap = 1;
    while (cap < capacity) cap <<= 1;
    slots_ = static_cast<Slot*>(std::calloc(cap, sizeof(Slot)));
    if (slots_ == nullptr) return false;
    capacity_ = cap;
    return true;
  }
  uint32_t capacity() const { return capacity_; }
  // Gives the memory back (a finalized communicator's pools, drained): no slot exists
  // after, so a stale handle finds nothing and a late claim fails (counted as a drop).
  void Free() {
    std::free(slots_);
    slots_ = nullptr;
    capacity_ = 0;
    unused_.store(0, std::memory_order_relaxed);
    free_head_.store(kNone, std::memory_order_relaxed);
  }

  // Hot path. Returns the claimed slot (now Open) and its index, or nullptr when no slot
  // is Free.
  Slot* Claim(uint32_t* index) {
    uint32_t i = PopFree();
    if (i == kNone) i = TakeUnused();
    if (i == kNone) return nullptr;
    Slot* s = &slots_[i];
    State(s).store(kOpen, std::memory_order_release);
    *index = i;
    return s;
  }

  // Hot path. The slot |index| if it is Open with generation |gen|, else nullptr (a
  // stale or foreign handle).
  Slot* FindOpen(uint32_t index, uint32_t gen) {
    if (index >= capacity_) return nullptr;
    Slot* s = &slots_[index];
    if (State(s).load(std::memory_order_acquire) != kOpen) return nullptr;
    if (Generation(s).load(std::memory_order_relaxed) + base_ != gen) return nullptr;
    return s;
  }
  uint32_t GenerationOf(Slot* s) { return Generation(s).load(std::memory_order_relaxed) + base_; }
  // Above every generation the pool gave out: each of its tokens has a generation in
  // [base, GenerationsEnd()). Before Free.
  uint64_t GenerationsEnd() const {
    uint32_t used = 0;
    for (uint32_t i = 0, n = unused_.load(std::memory_order_acquire); i < n; ++i)
      used = std::max(used, std::atomic_ref<uint32_t>(slots_[i].generation).load(std::memory_order_relaxed) + 1);
    return uint64_t{base_} + used;
  }

  // Open -> Done: the flusher may now read it.
  void MarkDone(Slot* s) { State(s).store(kDone, std::memory_order_release); }
  // Open or Done -> Free, with a new generation so old handles no longer match.
  void Release(Slot* s) {
    const uint32_t i = static_cast<uint32_t>(s - slots_);
    Retire(s);
    PushFree(i, i);
  }

  // Flusher: calls f(const T&) for every Done slot, then frees it. Returns how many.
  template <typename F>
  uint64_t DrainDone(F&& f) {
    const uint32_t used = unused_.load(std::memory_order_acquire);  // the rest are Free
    uint32_t top = kNone, bottom = kNone;  // the freed slots, chained for one push
    uint64_t n = 0;
    for (uint32_t i = 0; i < used; ++i) {
      Slot* s = &slots_[i];
      if (State(s).load(std::memory_order_acquire) != kDone) continue;
      f(s->data);
      Retire(s);
      NextFree(s).store(top, std::memory_order_relaxed);
      if (bottom == kNone) bottom = i;
      top = i;
      ++n;
    }
    if (n > 0) PushFree(top, bottom);
    return n;
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;

  static std::atomic_ref<uint32_t> State(Slot* s) { return std::atomic_ref<uint32_t>(s->state); }
  static std::atomic_ref<uint32_t> Generation(Slot* s) {
    return std::atomic_ref<uint32_t>(s->generation);
  }
  static std::atomic_ref<uint32_t> NextFree(Slot* s) { return std::atomic_ref<uint32_t>(s->next_free); }

  // The stack head: the top slot's index in the low half, the tag in the high half.
  static uint64_t Head(uint32_t top, uint64_t old_head) {
    return ((old_head >> 32) + 1) << 32 | top;
  }
  static uint32_t TopOf(uint64_t head) { return static_cast<uint32_t>(head); }

  void Retire(Slot* s) {
    Generation(s).fetch_add(1, std::memory_order_relaxed);
    State(s).store(kFree, std::memory_order_relaxed);  // published by PushFree
  }

  uint32_t PopFree() {
    uint64_t head = free_head_.load(std::memory_order_acquire);
    while (TopOf(head) != kNone) {
      // May read a slot another thread has just claimed; the tag then fails the swap.
      const uint32_t below = NextFree(&slots_[TopOf(head)]).load(std::memory_order_relaxed);
      if (free_head_.compare_exchange_weak(head, Head(below, head), std::memory_order_acquire,
                                           std::memory_order_acquire)) {
        return TopOf(head);
      }
    }
    return kNone;
  }

  // Pushes the chain |top| ... |bottom| (linked through next_free) in one swap.
  void PushFree(uint32_t top, uint32_t bottom) {
    uint64_t head = free_head_.load(std::memory_order_relaxed);
    do {
      NextFree(&slots_[bottom]).store(TopOf(head), std::memory_order_relaxed);
    } while (!free_head_.compare_exchange_weak(head, Head(top, head), std::memory_order_release,
                                               std::memory_order_relaxed));
  }

  // The next slot never claimed before, or kNone once every slot has been used.
  uint32_t TakeUnused() {
    uint32_t n = unused_.load(std::memory_order_relaxed);
    while (n < capacity_) {
      if (unused_.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel, std::memory_order_relaxed))
        return n;
    }
    return kNone;
  }

  Slot* slots_ = nullptr;
  uint32_t capacity_ = 0;
  uint32_t base_ = 0;  // the first generation (Allocate)
  alignas(64) std::atomic<uint64_t> free_head_{kNone};  // empty, tag 0
  std::atomic<uint32_t> unused_{0};  // slots [0, unused_) have been claimed at least once
};

}  // namespace commlens::recorder
