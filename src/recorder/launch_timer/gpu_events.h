// What the launch timer needs of CUDA: timing events recorded on a stream, asked whether
// they have happened, and the GPU time between two of them. The recorder's plugin uses
// CUDA's driver library as the job already loaded it (driver_events.h); tests give a
// stand-in with a GPU of their own making.
//
// Handles (a CUcontext, CUstream or CUevent) travel as numbers, 0 for none. Threading:
// Capturing, StreamContext, Record, and NewEvent/DestroyEvent for a slot's events come
// from the threads that launch NCCL's kernels; the rest from the recorder's flusher (or
// the thread that ends the session).
#pragma once

#include <cstdint>
#include <string>

namespace commlens::recorder::launch_timer {

class GpuEvents {
 public:
  using Handle = uint64_t;
  enum class Done { kYes, kNotYet, kError };

  virtual ~GpuEvents() = default;
  // Readies the calls; false, with |why|, when they cannot be made.
  virtual bool Load(std::string* why) = 0;
  // The context a stream belongs to; 0 when it cannot tell.
  virtual Handle StreamContext(uint64_t stream) = 0;
  // Whether work put on |stream| is being captured into a CUDA graph (it runs later, and
  // an event recorded there would become a node of the graph); true when it cannot tell.
  virtual bool Capturing(uint64_t stream) = 0;
  // A timing event, and a stream of the recorder's own, in |context|; 0 on failure.
  virtual Handle NewEvent(Handle context) = 0;
  virtual Handle NewStream(Handle context) = 0;
  virtual void DestroyEvent(Handle event) = 0;
  virtual void DestroyStream(Handle stream) = 0;
  virtual bool Record(Handle event, uint64_t stream) = 0;
  virtual Done Query(Handle event) = 0;
  // GPU time from |from| to |to|, both done; false on error.
  virtual bool ElapsedNs(Handle from, Handle to, int64_t* ns) = 0;
  // The calling thread's calls stop counting as unsafe for another thread's stream capture
  // (CUDA's "relaxed" capture mode) until Restore: without it, an event query from the
  // flusher while the application captures a CUDA graph in the default (global) mode
  // would invalidate that capture. Returns the mode to give back to Restore.
  virtual int RelaxCapture() { return 0; }
  virtual void RestoreCapture(int /*mode*/) {}
};

}  // namespace commlens::recorder::launch_timer
