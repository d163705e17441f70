// The sampler's only disk writes: a thread of its own appends the bytes handed to it, so
// a slow disk never delays a tick. The sampling thread hands over a whole buffer at
// each flush (swapping vectors, no copy); if the previous one is still being written it
// keeps its bytes and tries again at the next flush, and its buffer's bound
// (SampleBuffer) then drops samples, counted.
//
// A failed write closes the file: later bytes are dropped and error() says why; the
// recording goes on without its file rather than stopping the job.
//
// Threading: TryHandOver and Finish from one thread (the sampler's owner); the counters
// from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"

namespace commlens::recorder::sampler {

class SampleFile {
 public:
  // Creates (or truncates) |path| and starts the writer thread.
  static Result<std::unique_ptr<SampleFile>> Open(const std::string& path);
  ~SampleFile();

  // Takes |bytes| (leaving |bytes| empty, with the capacity of an earlier hand-over) if
  // the writer is idle; false, leaving |bytes| alone, if it is still writing.
  bool TryHandOver(std::vector<uint8_t>* bytes);
  // True when a hand-over would be taken now (nothing in flight).
  bool idle();
  // Writes |last| after whatever is in flight, then stops the thread and closes the file.
  void Finish(std::vector<uint8_t>* last);

  int error() const { return error_.load(); }  // errno of the failed write, 0 if none
  uint64_t bytes_written() const { return bytes_written_.load(); }
  uint64_t cpu_ns() const { return cpu_ns_.load(); }  // the writer thread's CPU time so far

 private:
  explicit SampleFile(int fd);
  void Run();
  void Write(const std::vector<uint8_t>& bytes);

  int fd_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<uint8_t> pending_;  // under mu_: handed over, not yet taken by the writer
  bool has_pending_ = false;      // under mu_
  bool busy_ = false;             // under mu_: the writer holds bytes it has not written
  bool stop_ = false;             // under mu_
  std::vector<uint8_t> spare_;    // under mu_: an emptied buffer, given back at the next hand-over
  std::atomic<int> error_{0};
  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> cpu_ns_{0};
  std::thread thread_;
};

}  // namespace commlens::recorder::sampler
