// One NCCL communicator as the recorder sees it: its identity and the event pools its
// events live in while open. NCCL hands the Context* back to every startEvent of the
// communicator; stop and record calls find it through the registry index in the token.
//
// Two numbers name it: its registry index (in every token; a finalized communicator's
// index is given to a new one once a session has used all kMaxContexts, its pools'
// generations then starting above the old one's) and its id in the file (CommRecord::comm,
// never reused within a file).
//
// Threading: pools follow slot_pool.h (in practice the op and API pools are filled by
// the thread that calls NCCL on this communicator, the kernel and proxy pools by its
// proxy thread). Drop and orphan counters are relaxed atomics touched only when an
// event is lost; |recorded| and |comm_written| belong to the flusher.
//
// Progress: the last time one of this communicator's operations advanced (an op started,
// a kernel channel, proxy step or proxy op ended), for the alive mark of each flush and
// through it the live hang alarm (MarkRecord::last_progress_ns). Both of NCCL's threads
// store it with a relaxed store, no read-modify-write: a thread preempted between its
// clock read and its store may set it back by that delay, which is far below the
// seconds the alarm counts in.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "recorder/nccl_profiler/config.h"
#include "recorder/nccl_profiler/event_data.h"
#include "recorder/nccl_profiler/slot_pool.h"

namespace commlens::recorder {

struct CommParams {
  uint64_t hash = 0;
  const char* name = nullptr;
  int nnodes = 0;
  int nranks = 0;
  int rank = -1;
  int abi_version = 0;
};

class Context {
 public:
  Context(uint32_t index, uint32_t file_id, const CommParams& params, int64_t init_ns);

  // Allocates the pools (sizes from |cfg|), their generations from |generation_base|.
  // False if memory is short.
  bool Allocate(const RecorderConfig& cfg, uint32_t generation_base = 0);
  // The first generation a later communicator at this registry index may use: above every
  // generation this one's pools gave out (before FreePools).
  uint64_t NextGenerationBase() const;
  // Finalized and drained: the pools' memory goes back (a job whose communicators come and
  // go would otherwise keep every one's), and no event of it can start any more (NCCL
  // makes none; a late one would find no slot, so no token that a later communicator at
  // the same index could also give out).
  void FreePools();

  uint32_t index() const { return index_; }
  uint32_t file_id() const { return file_id_; }
  uint64_t hash() const { return hash_; }
  const std::string& name() const { return name_; }
  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  int nnodes() const { return nnodes_; }
  int abi_version() const { return abi_version_; }
  int64_t init_ns() const { return init_ns_; }

  // Ordinals that every rank of the communicator assigns alike (OpRecord::comm_seq).
  uint64_t NextCollSeq() { return coll_seq_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t NextCeSeq() { return ce_seq_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t NextP2pSeq(int peer, bool send);
  uint64_t colls_seen() const { return coll_seq_.load(std::memory_order_relaxed); }

  void CountDrop(EventKind k) { counters_[Index(k)].dropped.fetch_add(1, std::memory_order_relaxed); }
  void CountOrphan(EventKind k) { counters_[Index(k)].orphaned.fetch_add(1, std::memory_order_relaxed); }
  uint64_t dropped(int kind) const { return counters_[kind].dropped.load(std::memory_order_relaxed); }
  uint64_t orphaned(int kind) const { return counters_[kind].orphaned.load(std::memory_order_relaxed); }

  void NoteProgress(int64_t now_ns) { last_progress_ns_.store(now_ns, std::memory_order_relaxed); }
  int64_t last_progress_ns() const { return last_progress_ns_.load(std::memory_order_relaxed); }

  SlotPool<OpData> ops;
  SlotPool<ApiData> apis;
  SlotPool<KernelData> kernels;
  SlotPool<ProxyOpData> proxy_ops;
  SlotPool<ProxyStepData> proxy_steps;

  // Owned by whoever holds the session's data mutex (the flusher, init, finalize).
  uint64_t recorded[native_format::kNumEventKinds] = {};
  uint64_t last_stats_sum = 0;
  bool comm_written = false;
  bool retired = false;  // finalized; its last events are written

 private:
  static int Index(EventKind k) { return static_cast<int>(k); }
  struct alignas(64) KindCounters {
    std::atomic<uint64_t> dropped{0};
    std::atomic<uint64_t> orphaned{0};
  };

  const uint32_t index_;
  const uint32_t file_id_;
  const uint64_t hash_;
  const std::string name_;
  const int rank_;
  const int nranks_;
  const int nnodes_;
  const int abi_version_;
  const int64_t init_ns_;

  alignas(64) std::atomic<int64_t> last_progress_ns_;  // starts at init_ns_
  alignas(64) std::atomic<uint64_t> coll_seq_{0};
  std::atomic<uint64_t> ce_seq_{0};
  // Per peer and direction: [2 * peer + send]; the last pair is for peers out of range.
  std::unique_ptr<std::atomic<uint64_t>[]> p2p_seq_;
  KindCounters counters_[native_format::kNumEventKinds];
};

}  // namespace commlens::recorder
