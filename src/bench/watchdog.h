// A watchdog for the steps that cannot bound their own waits (NCCL communicator setup,
// an NCCL call that blocks on a peer, MPI): the driver arms it with a phase name before
// such a step and disarms it after. If the step outlives its timeout the watchdog calls
// the expiry action on its own thread: by default print which phase hung, call the
// registered abort hooks (ncclCommAbort) for at most a few seconds, and end the process
// with ExitCode::kTimeout — a benchmark must never hang.
//
// Threading: Arm/Disarm/AddAbortHook are called from the driver's thread; the expiry
// action runs on the watchdog's thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace commlens::bench {

class Watchdog {
 public:
  using ExpireAction = std::function<void(const std::string& phase, std::chrono::milliseconds)>;

  // |action| replaces the default (print, abort hooks, exit) — for tests.
  explicit Watchdog(ExpireAction action = nullptr);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void Arm(std::string phase, std::chrono::milliseconds timeout);
  void Disarm();
  // Run by the default action before it exits (e.g. ncclCommAbort on every communicator).
  void AddAbortHook(std::function<void()> hook);
  void ClearAbortHooks();

  // Arms for the life of the returned guard.
  class Guard {
   public:
    Guard(Watchdog& w, std::string phase, std::chrono::milliseconds timeout) : w_(w) {
      w_.Arm(std::move(phase), timeout);
    }
    ~Guard() { w_.Disarm(); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    Watchdog& w_;
  };

 private:
  void Loop();
  void DefaultExpire(const std::string& phase, std::chrono::milliseconds timeout);

  ExpireAction action_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false;
  bool stop_ = false;
  std::string phase_;
  std::chrono::milliseconds timeout_{0};
  std::chrono::steady_clock::time_point deadline_;
  std::vector<std::function<void()>> abort_hooks_;
  std::thread thread_;
};

}  // namespace commlens::bench
