// SQLite's memory for a fuzz target: size classes carved from large blocks, with what
// AddressSanitizer checks kept by poisoning by hand.
//
// Debian's SQLite is built without lookaside (SQLITE_OMIT_LOOKASIDE), so each token of a
// statement it parses and each page it caches is a malloc: about 8,000 per input of
// nsys_fuzzer, and ASan's malloc (a stack trace, the quarantine, libFuzzer's hooks) is
// many times dearer than carving a slot. SQLite itself is not instrumented: what ASan's heap checks catch
// in its memory is the fuzzed code (ours) reading or writing past a buffer SQLite handed
// out or after SQLite freed it. Both stay caught here, as use-after-poison:
//  - each block is followed by a poisoned redzone of at least 16 bytes (the block's size
//    is rounded to 8 bytes, the granule ASan poisons, and SQLite told so: xRoundup);
//  - a freed block is poisoned and waits behind kQuarantineBlocks others of its class
//    before it is handed out again;
//  - a leak is caught too: LiveBlocks() says how many blocks SQLite holds, and the target
//    checks that an input gives back every block it took (LSan does not see these).
// What is lost is only the allocation and free stacks in a report. Requests over
// kLargestSlotClass bytes go to malloc, checked by ASan as usual.
//
// Install() must run before SQLite is first used (sqlite3_config); the process is then
// the fuzz target's, and SQLite runs on one thread: Install() also sets SQLite
// single-threaded (no mutexes) and turns its memory statistics off, each a lock per call.
#pragma once

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COMMLENS_FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define COMMLENS_FUZZ_ASAN 1
#endif
#ifdef COMMLENS_FUZZ_ASAN
#include <sanitizer/asan_interface.h>
#endif
// The allocator's own code is neither checked nor counted as coverage: it reads the
// headers it keeps poisoned, and its branches say nothing of the input.
#if defined(__clang__)
#define COMMLENS_ALLOCATOR_CODE __attribute__((no_sanitize("address", "undefined", "coverage")))
#elif defined(__GNUC__)
#define COMMLENS_ALLOCATOR_CODE __attribute__((no_sanitize("address", "undefined")))
#else
#define COMMLENS_ALLOCATOR_CODE
#endif

namespace commlens::fuzz {

// Size classes of SqliteFuzzAllocator: 16-byte steps to 512 bytes, then 64-byte steps.
inline constexpr size_t kLargestSlotClass = 4096;
constexpr size_t SlotClass(size_t bytes) {  // bytes <= kLargestSlotClass
  return bytes <= 512 ? (bytes + 15) / 16 : 32 + (bytes - 512 + 63) / 64;
}
constexpr size_t SlotClassBytes(size_t cls) { return cls <= 32 ? cls * 16 : 512 + (cls - 32) * 64; }

class SqliteFuzzAllocator {
 public:
  // A slot is a 16-byte header (always poisoned), the block, and at least kRedzone
  // poisoned bytes.
  static constexpr size_t kHeader = 16;
  static constexpr size_t kRedzone = 16;
  static constexpr size_t kQuarantineBlocks = 256;  // per class
  static constexpr size_t kArenaBytes = 64 << 20;  // address space; pages are touched as carved

  static void Install() {
    static sqlite3_mem_methods methods{&Malloc, &Free, &Realloc, &Size, &Roundup, &Init, &Shutdown, nullptr};
    if (sqlite3_config(SQLITE_CONFIG_SINGLETHREAD) != SQLITE_OK ||
        sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) != SQLITE_OK ||
        sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) != SQLITE_OK)
      std::abort();
  }

  // Blocks SQLite holds now, of every size.
  static int64_t LiveBlocks() { return State().live; }

 private:
  struct Header {
    uint32_t magic;  // kMagic while SQLite holds the block
    uint32_t cls;    // size class; kLarge for a block from malloc
    uint64_t bytes;  // usable bytes (the request rounded to 8)
  };
  static_assert(sizeof(Header) == kHeader);
  static constexpr uint32_t kMagic = 0x5eed51e5;
  static constexpr uint32_t kLarge = UINT32_MAX;
  static constexpr size_t kClasses = SlotClass(kLargestSlotClass) + 1;

  // Freed slots of one class: the newest kQuarantineBlocks wait in a ring (poisoned, not
  // handed out); older ones are ready for reuse. Arrays of pointers, not lists through
  // the slots: a slot freed long ago is out of the cache. Their memory grows only while
  // SQLite holds more blocks than ever before, so libFuzzer sees as many mallocs as frees
  // (a mismatch makes it run the input again for a leak check).
  struct Queue {
    char* ring[kQuarantineBlocks];
    size_t oldest = 0, waiting = 0;
    std::vector<char*> ready;
  };
  struct Pools {
    Queue freed[kClasses];
    std::vector<char*> arenas;  // kept for LeakSanitizer: slots are reused, never freed
    char* arena = nullptr;      // the rest of the newest arena
    size_t arena_left = 0;
    int64_t live = 0;
  };
  static Pools& State() {
    static Pools* pools = [] {
      auto* p = new Pools;  // never destroyed: SQLite may free at exit
      for (Queue& q : p->freed) q.ready.reserve(4096);
      return p;
    }();
    return *pools;
  }
  // Marks [p, p + n) poisoned (ASan reports an access as use-after-poison) or not.
  static void Shadow(const char* p, size_t n, bool poisoned) {
#ifdef COMMLENS_FUZZ_ASAN
    if (poisoned) __asan_poison_memory_region(p, n);
    else __asan_unpoison_memory_region(p, n);
#else
    (void)p, (void)n, (void)poisoned;
#endif
  }

  COMMLENS_ALLOCATOR_CODE static Header* HeaderOf(void* p) {
    return reinterpret_cast<Header*>(static_cast<char*>(p) - kHeader);
  }

  COMMLENS_ALLOCATOR_CODE static char* Carve(Pools& s, size_t slot) {
    if (s.arena_left < slot) {
      s.arena = static_cast<char*>(std::malloc(kArenaBytes));
      if (!s.arena) return nullptr;
      s.arenas.push_back(s.arena);
      s.arena_left = kArenaBytes;
    }
    char* p = s.arena;
    Shadow(p, slot, true);
    s.arena += slot;
    s.arena_left -= slot;
    return p;
  }

  COMMLENS_ALLOCATOR_CODE static void* Malloc(int n) {
    if (n <= 0) return nullptr;
    const size_t bytes = static_cast<size_t>(Roundup(n));
    Pools& s = State();
    char* slot;
    uint32_t cls = kLarge;
    if (bytes + kRedzone > kLargestSlotClass) {
      slot = static_cast<char*>(std::malloc(kHeader + bytes));  // ASan's redzones
      if (!slot) return nullptr;
      Shadow(slot, kHeader, true);
    } else {
      cls = static_cast<uint32_t>(SlotClass(bytes + kRedzone));
      Queue& freed = s.freed[cls];
      if (!freed.ready.empty()) {
        slot = freed.ready.back();
        freed.ready.pop_back();
      } else {
        slot = Carve(s, kHeader + SlotClassBytes(cls));
        if (!slot) return nullptr;
      }
    }
    *reinterpret_cast<Header*>(slot) = Header{kMagic, cls, bytes};
    Shadow(slot + kHeader, bytes, false);
    ++s.live;
    return slot + kHeader;
  }

  COMMLENS_ALLOCATOR_CODE static const Header& Held(void* p) {
    const Header* h = HeaderOf(p);
    if (h->magic != kMagic) std::abort();  // not a block of ours, or freed twice
    return *h;
  }

  COMMLENS_ALLOCATOR_CODE static void Free(void* p) {
    if (!p) return;
    Header* h = HeaderOf(p);
    const uint32_t cls = Held(p).cls;
    char* slot = reinterpret_cast<char*>(h);
    Pools& s = State();
    --s.live;
    h->magic = 0;
    if (cls == kLarge) {
      Shadow(slot, kHeader, false);
      std::free(slot);
      return;
    }
    Shadow(slot, kHeader + SlotClassBytes(cls), true);
    Queue& freed = s.freed[cls];
    if (freed.waiting == kQuarantineBlocks) {
      freed.ready.push_back(freed.ring[freed.oldest]);
      freed.ring[freed.oldest] = slot;
      freed.oldest = (freed.oldest + 1) % kQuarantineBlocks;
    } else {
      freed.ring[(freed.oldest + freed.waiting++) % kQuarantineBlocks] = slot;
    }
  }

  COMMLENS_ALLOCATOR_CODE static void* Realloc(void* p, int n) {
    if (!p) return Malloc(n);
    const uint64_t bytes = Held(p).bytes;
    if (static_cast<uint64_t>(Roundup(n)) == bytes) return p;
    void* q = Malloc(n);
    if (!q) return nullptr;
    std::memcpy(q, p, bytes < static_cast<uint64_t>(n) ? bytes : static_cast<size_t>(n));
    Free(p);
    return q;
  }

  COMMLENS_ALLOCATOR_CODE static int Size(void* p) { return p ? static_cast<int>(Held(p).bytes) : 0; }
  COMMLENS_ALLOCATOR_CODE static int Roundup(int n) { return (n + 7) & ~7; }
  static int Init(void*) { return SQLITE_OK; }
  static void Shutdown(void*) {}
};

}  // namespace commlens::fuzz
