// The command `commlens record` runs: found on PATH, started with its own environment,
// given the signals record receives, waited for.
//
// Signals. SignalForwarding blocks SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 and SIGCHLD
// in the thread that creates it, so every thread started afterwards (the sampler's, the
// live metrics writer) has them blocked too, and Child::Wait takes them synchronously
// with sigwaitinfo: no handler runs, nothing is async-signal-unsafe. A signal is passed
// on to the child (to its process group when it has one of its own: a launcher such as
// torchrun or mpirun, whose workers must get it too), except
//  - a signal that was ignored when record started (nohup's SIGHUP): the child inherits
//    the same ignored disposition, so it is not sent either;
//  - a signal the terminal sent (Ctrl-C: si_code SI_KERNEL) while the child shares
//    record's process group: the terminal sent it to the child as well.
// The child runs with the signal mask record had at its start, and gets SIGTERM if
// record dies first (PR_SET_PDEATHSIG), so a killed record does not leave the job behind.
//
// Exit codes: a command that is not found is 127, one that is found but cannot be run
// (no permission, a folder, a bad executable format) 126, as in POSIX shells; a command
// killed by signal N gives 128 + N.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace commlens::recorder::launcher {

inline constexpr int kExitCannotRun = 126;
inline constexpr int kExitNotFound = 127;

// The signals passed on to the command.
inline constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};

class SignalForwarding {
 public:
  SignalForwarding();
  ~SignalForwarding();  // restores the mask and SIGCHLD's disposition
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

  const sigset_t& waited() const { return waited_; }
  const sigset_t& original_mask() const { return original_mask_; }
  bool was_ignored(int sig) const;
  bool sigchld_was_ignored() const { return sigchld_was_ignored_; }

 private:
  sigset_t waited_;
  sigset_t original_mask_;
  sigset_t ignored_;
  bool sigchld_was_ignored_ = false;
};

// Where |name| is run from: itself when it holds a '/', else the first executable file of
// that name in the folders of |path_var| (":"-separated, an empty entry is the current
// folder). On failure, |exit_code| is 127 or 126 and |error| says why.
struct ResolvedCommand {
  std::string path;
  int exit_code = 0;
  std::string error;
};
ResolvedCommand ResolveCommand(const std::string& name, const char* path_var);

struct ChildOptions {
  std::string path;               // from ResolveCommand
  std::vector<std::string> argv;  // argv[0] as the user wrote it
  std::vector<std::string> env;   // "NAME=value"
  bool own_process_group = false;
};

class Child {
 public:
  // Starts the command. On failure (exec failed after all), pid() is -1 and start_error()
  // and start_exit_code() say why.
  static Child Start(const ChildOptions& options, const SignalForwarding& signals);

  pid_t pid() const { return pid_; }
  const std::string& start_error() const { return start_error_; }
  int start_exit_code() const { return start_exit_code_; }

  // Waits until the child ends, passing signals on as described above; |on_signal| is
  // told about each signal received and whether it was passed on. Returns the wait status.
  int Wait(const SignalForwarding& signals,
           const std::function<void(int sig, bool passed_on)>& on_signal);

 private:
  pid_t pid_ = -1;
  bool own_group_ = false;
  std::string start_error_;
  int start_exit_code_ = 0;
};

// The exit code record passes on: the child's, or 128 + the signal that killed it.
int ExitCodeOf(int wait_status);
// "exited with 3", "was killed by SIGTERM".
std::string DescribeWaitStatus(int wait_status);
// "SIGTERM", or "signal 40".
std::string SignalName(int sig);

}  // namespace commlens::recorder::launcher
