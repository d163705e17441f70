#include "bench/watchdog.h"

#include <cstdio>
#include <cstdlib>
#include <future>

#include "bench/errors.h"

namespace commlens::bench {

namespace {
constexpr std::chrono::seconds kAbortGrace{10};
}

Watchdog::Watchdog(ExpireAction action) : action_(std::move(action)) {
  thread_ = std::thread([this] { Loop(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::Arm(std::string phase, std::chrono::milliseconds timeout) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = true;
    phase_ = std::move(phase);
    timeout_ = timeout;
    deadline_ = std::chrono::steady_clock::now() + timeout;
  }
  cv_.notify_all();
}

void Watchdog::Disarm() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = false;
  }
  cv_.notify_all();
}

void Watchdog::AddAbortHook(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(mu_);
  abort_hooks_.push_back(std::move(hook));
}

void Watchdog::ClearAbortHooks() {
  std::lock_guard<std::mutex> lock(mu_);
  abort_hooks_.clear();
}

void Watchdog::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (!armed_) {
      cv_.wait(lock);
      continue;
    }
    if (cv_.wait_until(lock, deadline_) != std::cv_status::timeout) continue;
    if (!armed_ || stop_ || std::chrono::steady_clock::now() < deadline_) continue;
    armed_ = false;
    std::string phase = phase_;
    auto timeout = timeout_;
    lock.unlock();
    if (action_) {
      action_(phase, timeout);
    } else {
      DefaultExpire(phase, timeout);
    }
    lock.lock();
  }
}

void Watchdog::DefaultExpire(const std::string& phase, std::chrono::milliseconds timeout) {
  std::fprintf(stderr,
               "commlens bench: timeout: '%s' did not finish within %.3g s (--timeout); a peer "
               "may have failed or never started. Aborting.\n",
               phase.c_str(), timeout.count() / 1000.0);
  std::fflush(stderr);
  std::vector<std::function<void()>> hooks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    hooks = abort_hooks_;
  }
  // The hooks may block inside NCCL; give them a bounded time, then exit regardless.
  auto done = std::async(std::launch::async, [hooks] {
    for (const auto& hook : hooks) hook();
  });
  done.wait_for(kAbortGrace);
  std::_Exit(static_cast<int>(ExitCode::kTimeout));
}

}  // namespace commlens::bench
