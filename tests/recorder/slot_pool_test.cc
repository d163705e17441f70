// The plugin's event slot pool on its own: a claim fails only when no slot is Free (an
// event left open blocks no other), released slots come back with a new generation, and
// threads claiming, stopping and draining at once never share a slot (scripts/tsan.sh
// runs this under ThreadSanitizer).
#include "recorder/nccl_profiler/slot_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace commlens::recorder {
namespace {

struct Event {
  uint64_t owner;
  uint64_t seq;
};
using Pool = SlotPool<Event>;

TEST(SlotPoolTest, ALongOpenEventBlocksNoOther) {
  Pool pool;
  ASSERT_TRUE(pool.Allocate(4));
  uint32_t stuck_index = 0;
  ASSERT_NE(pool.Claim(&stuck_index), nullptr);  // never stopped (a stalled proxy op)
  for (int i = 0; i < 100; ++i) {
    uint32_t index = 0;
    Pool::Slot* s = pool.Claim(&index);
    ASSERT_NE(s, nullptr) << "claim " << i << " failed with 3 slots free";
    EXPECT_NE(index, stuck_index);
    pool.MarkDone(s);
    EXPECT_EQ(pool.DrainDone([](const Event&) {}), 1u);
  }
}

TEST(SlotPoolTest, ClaimFailsOnlyWhenEverySlotIsInUse) {
  Pool pool;
  ASSERT_TRUE(pool.Allocate(4));
  uint32_t index = 0;
  std::vector<Pool::Slot*> open;
  for (int i = 0; i < 4; ++i) {
    Pool::Slot* s = pool.Claim(&index);
    ASSERT_NE(s, nullptr);
    if (i % 2 == 0) open.push_back(s);
    else pool.MarkDone(s);
  }
  EXPECT_EQ(pool.Claim(&index), nullptr);  // two Open, two Done: full
  EXPECT_EQ(pool.DrainDone([](const Event&) {}), 2u);
  EXPECT_NE(pool.Claim(&index), nullptr);
  EXPECT_NE(pool.Claim(&index), nullptr);
  EXPECT_EQ(pool.Claim(&index), nullptr);
  pool.Release(open[0]);  // an event folded into another frees its slot itself
  EXPECT_NE(pool.Claim(&index), nullptr);
}

TEST(SlotPoolTest, ReleasedSlotsGetANewGeneration) {
  Pool pool;
  ASSERT_TRUE(pool.Allocate(2));
  uint32_t index = 0;
  Pool::Slot* s = pool.Claim(&index);
  ASSERT_NE(s, nullptr);
  const uint32_t gen = pool.GenerationOf(s);
  EXPECT_EQ(pool.FindOpen(index, gen), s);
  pool.Release(s);
  EXPECT_EQ(pool.FindOpen(index, gen), nullptr);  // a stale handle
  uint32_t again = 0;
  Pool::Slot* t = pool.Claim(&again);
  ASSERT_EQ(t, s);  // freed slots are reused first
  EXPECT_EQ(again, index);
  EXPECT_NE(pool.GenerationOf(t), gen);
  EXPECT_EQ(pool.FindOpen(index, gen), nullptr);
  EXPECT_EQ(pool.FindOpen(index, pool.GenerationOf(t)), t);
}

// Two producers (one stops its events for the drainer, one frees them itself as a proxy
// step does) and a drainer, on a pool small enough to be full at times.
TEST(SlotPoolTest, ConcurrentClaimsNeverShareASlot) {
  Pool pool;
  ASSERT_TRUE(pool.Allocate(16));
  constexpr uint64_t kEvents = 20000;
  std::atomic<uint64_t> claimed{0}, released{0}, drained{0}, mixed_up{0};
  std::atomic<int> producing{2};
  auto produce = [&](uint64_t owner, bool release_itself) {
    for (uint64_t seq = 0; seq < kEvents; ++seq) {
      uint32_t index = 0;
      Pool::Slot* s = pool.Claim(&index);
      if (s == nullptr) {
        std::this_thread::yield();  // full: the event is dropped
        continue;
      }
      claimed.fetch_add(1, std::memory_order_relaxed);
      s->data = Event{owner, seq};
      std::this_thread::yield();  // give another thread the chance to take it too
      if (s->data.owner != owner || s->data.seq != seq) mixed_up.fetch_add(1);
      if (release_itself) {
        pool.Release(s);
        released.fetch_add(1, std::memory_order_relaxed);
      } else {
        pool.MarkDone(s);
      }
    }
    producing.fetch_sub(1);
  };
  std::thread done_producer(produce, 1, false);
  std::thread self_releaser(produce, 2, true);
  auto drain = [&] {
    drained.fetch_add(pool.DrainDone([&](const Event& e) {
      if (e.owner != 1) mixed_up.fetch_add(1);
    }));
  };
  while (producing.load() > 0) {
    drain();
    std::this_thread::yield();
  }
  done_producer.join();
  self_releaser.join();
  drain();
  EXPECT_EQ(mixed_up.load(), 0u);
  EXPECT_GT(claimed.load(), 0u);
  EXPECT_EQ(claimed.load(), drained.load() + released.load());
  // Every slot is Free again: the whole pool can be claimed.
  uint32_t index = 0;
  for (uint32_t i = 0; i < pool.capacity(); ++i) EXPECT_NE(pool.Claim(&index), nullptr) << i;
  EXPECT_EQ(pool.Claim(&index), nullptr);
}

}  // namespace
}  // namespace commlens::recorder
