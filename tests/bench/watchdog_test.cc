#include "bench/watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

namespace commlens::bench {
namespace {

using std::chrono::milliseconds;

TEST(Watchdog, FiresWithThePhaseWhenAStepOverruns) {
  std::promise<std::string> fired;
  Watchdog w([&](const std::string& phase, milliseconds) { fired.set_value(phase); });
  w.Arm("NCCL communicator setup", milliseconds(20));
  auto f = fired.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(f.get(), "NCCL communicator setup");
}

TEST(Watchdog, QuietWhenDisarmedInTime) {
  std::atomic<int> fired{0};
  {
    Watchdog w([&](const std::string&, milliseconds) { ++fired; });
    for (int i = 0; i < 100; ++i) {
      Watchdog::Guard g(w, "step", milliseconds(10000));
    }
  }  // destroyed while idle: joins without firing
  EXPECT_EQ(fired.load(), 0);
}

TEST(Watchdog, RearmingMovesTheDeadline) {
  std::promise<std::string> fired;
  Watchdog w([&](const std::string& phase, milliseconds) { fired.set_value(phase); });
  w.Arm("first", milliseconds(100000));
  w.Arm("second", milliseconds(10));
  auto f = fired.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(f.get(), "second");
}

TEST(WatchdogDeathTest, DefaultActionRunsAbortHooksAndExitsWithTimeoutCode) {
  EXPECT_EXIT(
      {
        Watchdog w;
        w.AddAbortHook([] { std::fputs("abort hook ran\n", stderr); });
        w.Arm("a hung step", milliseconds(10));
        std::this_thread::sleep_for(std::chrono::seconds(30));
      },
      testing::ExitedWithCode(5), "a hung step.*did not finish(.|\n)*abort hook ran");
}

}  // namespace
}  // namespace commlens::bench
