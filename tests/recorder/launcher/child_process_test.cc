// The command record runs: found or not (127), not runnable (126), its exit code and the
// signal that killed it, signals passed on to it (and to its process group), and nothing
// passed on that was ignored when record started.
#include "recorder/launcher/child_process.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "recorder/launcher/environment.h"

namespace commlens::recorder::launcher {
namespace {

namespace fs = std::filesystem;

class ChildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("commlens_child_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs sh -c |script| to its end, with |during| called on another thread while it runs.
  int Run(const std::string& script, bool own_group = false,
          const std::function<void(pid_t)>& during = {}) {
    SignalForwarding signals;
    ChildOptions o;
    o.path = ResolveCommand("sh", std::getenv("PATH")).path;
    o.argv = {"sh", "-c", script};
    o.env = Environment::FromProcess().Entries();
    o.own_process_group = own_group;
    Child child = Child::Start(o, signals);
    EXPECT_GT(child.pid(), 0) << child.start_error();
    std::thread helper;
    if (during) helper = std::thread([&] { during(child.pid()); });
    int status = child.Wait(signals, [this](int sig, bool passed) {
      received_.push_back({sig, passed});
    });
    if (helper.joinable()) helper.join();
    return status;
  }
  // Waits (at most 10 s) for the child to say it is ready by creating |file|.
  bool WaitFor(const fs::path& file) {
    for (int i = 0; i < 1000; ++i) {
      if (fs::exists(file)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  std::string Slurp(const fs::path& p) {
    std::ifstream in(p);
    std::string s;
    std::getline(in, s);
    return s;
  }

  fs::path dir_;
  std::vector<std::pair<int, bool>> received_;
};

TEST_F(ChildTest, ResolvesLikeAShell) {
  ResolvedCommand sh = ResolveCommand("sh", "/nonexistent:/bin:/usr/bin");
  EXPECT_EQ(sh.exit_code, 0);
  EXPECT_EQ(sh.path, "/bin/sh");
  ResolvedCommand missing = ResolveCommand("commlens-no-such-command", "/bin:/usr/bin");
  EXPECT_EQ(missing.exit_code, kExitNotFound);
  EXPECT_EQ(missing.error, "command not found in PATH");
  EXPECT_EQ(ResolveCommand("/nonexistent/tool", "/bin").exit_code, kExitNotFound);
  // Found but not executable: 126, unless an executable one comes later on PATH.
  fs::path plain = dir_ / "a" / "tool";
  fs::create_directories(plain.parent_path());
  std::ofstream(plain) << "#!/bin/sh\nexit 0\n";
  fs::permissions(
      plain, fs::perms::owner_read | fs::perms::owner_write);  // no x bit: not even root runs it
  ResolvedCommand noexec = ResolveCommand("tool", (dir_ / "a").c_str());
  EXPECT_EQ(noexec.exit_code, kExitCannotRun) << noexec.error;
  EXPECT_NE(noexec.error.find("Permission denied"), std::string::npos) << noexec.error;
  fs::path good = dir_ / "b" / "tool";
  fs::create_directories(good.parent_path());
  fs::copy_file(plain, good);
  fs::permissions(good, fs::perms::owner_all);
  ResolvedCommand later =
      ResolveCommand("tool", ((dir_ / "a").string() + ":" + (dir_ / "b").string()).c_str());
  EXPECT_EQ(later.exit_code, 0);
  EXPECT_EQ(later.path, good.string());
  EXPECT_EQ(ResolveCommand(dir_.string(), "/bin").exit_code, kExitCannotRun);  // a folder
}

TEST_F(ChildTest, ExitCodesAndSignals) {
  EXPECT_EQ(ExitCodeOf(Run("exit 3")), 3);
  EXPECT_EQ(ExitCodeOf(Run("exit 0")), 0);
  int killed = Run("kill -TERM $$");
  EXPECT_EQ(ExitCodeOf(killed), 128 + SIGTERM);
  EXPECT_EQ(DescribeWaitStatus(killed), "was killed by SIGTERM");
  EXPECT_EQ(DescribeWaitStatus(Run("exit 4")), "exited with 4");
  EXPECT_EQ(SignalName(SIGUSR2), "SIGUSR2");
}

TEST_F(ChildTest, AScriptWithoutInterpreterLineRunsWithSh) {
  fs::path script = dir_ / "noshebang";
  std::ofstream(script) << "exit 6\n";
  fs::permissions(script, fs::perms::owner_all);
  SignalForwarding signals;
  ChildOptions o;
  o.path = script.string();
  o.argv = {script.string()};
  Child child = Child::Start(o, signals);
  ASSERT_GT(child.pid(), 0) << child.start_error();
  EXPECT_EQ(ExitCodeOf(child.Wait(signals, {})), 6);
}

TEST_F(ChildTest, AFileThatCannotBeExecutedIs126) {
  fs::path bad = dir_ / "bad";
  std::ofstream(bad) << "\x7f"
                        "ELF garbage";
  fs::permissions(bad, fs::perms::owner_all);
  SignalForwarding signals;
  ChildOptions o;
  o.path = bad.string();
  o.argv = {bad.string()};
  Child child = Child::Start(o, signals);
  // An ELF header it cannot load: exec fails with ENOEXEC, then sh refuses the binary.
  if (child.pid() > 0) {
    EXPECT_NE(ExitCodeOf(child.Wait(signals, {})), 0);
  } else {
    EXPECT_EQ(child.start_exit_code(), kExitCannotRun);
  }
}

// SIGTERM to record (here: to this process) reaches the command, which traps it.
TEST_F(ChildTest, SignalsArePassedOn) {
  const fs::path ready = dir_ / "ready", got = dir_ / "got";
  const std::string script = "trap 'echo TERM > " + got.string() + "; exit 9' TERM; touch " +
                             ready.string() + "; while :; do sleep 0.05; done";
  int status = Run(script, false, [&](pid_t) {
    ASSERT_TRUE(WaitFor(ready));
    kill(getpid(), SIGTERM);
  });
  EXPECT_EQ(ExitCodeOf(status), 9);
  EXPECT_EQ(Slurp(got), "TERM");
  ASSERT_EQ(received_.size(), 1u);
  EXPECT_EQ(received_[0], std::make_pair(SIGTERM, true));
}

// A launcher in a group of its own: the signal reaches its workers too.
TEST_F(ChildTest, ALaunchersProcessGroupGetsTheSignal) {
  const fs::path ready = dir_ / "ready", worker = dir_ / "worker";
  // The "launcher" shrugs USR1 off; its "worker" (a background job, same process group)
  // writes a file on it. Only a signal to the group reaches the worker.
  const std::string script = "trap : USR1; sh -c 'trap \"echo USR1 > " + worker.string() +
                             "; exit 0\" USR1; touch " + ready.string() +
                             "; while :; do sleep 0.05; done' & wait; wait";
  int status = Run(script, true, [&](pid_t) {
    ASSERT_TRUE(WaitFor(ready));
    kill(getpid(), SIGUSR1);
  });
  EXPECT_EQ(ExitCodeOf(status), 0);
  EXPECT_EQ(Slurp(worker), "USR1");
}

// A signal ignored when record started (nohup) is not passed on.
TEST_F(ChildTest, IgnoredSignalsAreNotPassedOn) {
  struct sigaction ign {
  }, old{};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGHUP, &ign, &old);
  const fs::path ready = dir_ / "ready";
  int status = Run("touch " + ready.string() + "; sleep 0.5; exit 2", false, [&](pid_t) {
    ASSERT_TRUE(WaitFor(ready));
    kill(getpid(), SIGHUP);
  });
  sigaction(SIGHUP, &old, nullptr);
  EXPECT_EQ(ExitCodeOf(status), 2);
  ASSERT_EQ(received_.size(), 1u);
  EXPECT_EQ(received_[0], std::make_pair(SIGHUP, false));
}

}  // namespace
}  // namespace commlens::recorder::launcher
