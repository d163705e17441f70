// The trace file and the bytes on their way to it: the plugin's only disk writes.
//
// Records are queued in the order the session serialized them (it queues while holding
// its data lock, so the order is that lock's order) and written by whoever calls Write:
// the flusher at each flush, or the session's end. Writing holds only this file's own
// write lock, never the session's data lock, so a slow disk (write, fdatasync) holds up
// nothing but the next write: init and finalize, which only queue, go on.
//
// Threading: Queue and Write may be called from any thread. Locks: |write_mu_| is held
// across write(2) and fdatasync; |queue_mu_| only to append or to take the queue. Order:
// write_mu_, then queue_mu_ (the session's data lock, when held, comes before both).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "native_format/record_writer.h"

namespace commlens::recorder {

class TraceFile {
 public:
  // Creates or truncates |path|. Returns 0, or the errno of the failure.
  int Open(const std::string& path);
  // A file made only once it has something to hold (a process that initialized CUDA but
  // never ran a kernel or NCCL leaves none): until Needed, Write keeps the queue, and
  // Close drops it without making the file. The first Write after Needed creates |path|.
  void OpenWhenNeeded(const std::string& path);
  void Needed();
  // Another path for a file not made yet; false once it is made (or opened at once).
  bool Retarget(const std::string& path);
  bool needed() const { return needed_.load(std::memory_order_relaxed); }
  // Appends |w|'s bytes to the queue.
  void Queue(const native_format::RecordWriter& w);
  // Writes everything queued (then fdatasync if |sync|). Returns 0, or the errno of a
  // failure in this call: the file is then closed and later bytes are dropped, since
  // the job must never fail for its trace.
  int Write(bool sync);
  // Closes the file; what is still queued is dropped (Write first).
  void Close();

 private:
  std::mutex write_mu_;
  int fd_ = -1;                   // under write_mu_
  std::string deferred_path_;     // under write_mu_: made by the first Write once needed_
  std::atomic<bool> needed_{true};
  std::vector<uint8_t> writing_;  // under write_mu_: the bytes being written
  std::mutex queue_mu_;
  std::vector<uint8_t> queued_;   // under queue_mu_
};

}  // namespace commlens::recorder
