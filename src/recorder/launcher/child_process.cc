#include "recorder/launcher/child_process.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace commlens::recorder::launcher {

namespace {

struct Named {
  int sig;
  const char* name;
};
constexpr Named kSignalNames[] = {
    {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
    {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
    {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
    {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"},
    {SIGXFSZ, "SIGXFSZ"},
};

// Why a file cannot be executed: 0 when it can, else an errno value.
int ExecutableError(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return EISDIR;
  if (access(path.c_str(), X_OK) != 0) return errno;
  return 0;
}

int ExitCodeForErrno(int error) {
  return error == ENOENT || error == ENOTDIR ? kExitNotFound : kExitCannotRun;
}

std::vector<char*> Pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

SignalForwarding::SignalForwarding() {
  sigemptyset(&waited_);
  sigemptyset(&ignored_);
  for (int sig : kForwardedSignals) {
    sigaddset(&waited_, sig);
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) sigaddset(&ignored_, sig);
  }
  sigaddset(&waited_, SIGCHLD);
  // An ignored SIGCHLD would reap the child by itself and lose its exit status.
  struct sigaction chld {};
  if (sigaction(SIGCHLD, nullptr, &chld) == 0 && chld.sa_handler == SIG_IGN) {
    sigchld_was_ignored_ = true;
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGCHLD, &dfl, nullptr);
  }
  pthread_sigmask(SIG_BLOCK, &waited_, &original_mask_);
}

SignalForwarding::~SignalForwarding() {
  if (sigchld_was_ignored_) {
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGCHLD, &ign, nullptr);
  }
  pthread_sigmask(SIG_SETMASK, &original_mask_, nullptr);
}

bool SignalForwarding::was_ignored(int sig) const { return sigismember(&ignored_, sig) == 1; }

ResolvedCommand ResolveCommand(const std::string& name, const char* path_var) {
  ResolvedCommand r;
  if (name.empty()) {
    r.exit_code = kExitNotFound;
    r.error = "no command given";
    return r;
  }
  if (name.find('/') != std::string::npos) {
    if (int error = ExecutableError(name)) {
      r.exit_code = ExitCodeForErrno(error);
      r.error = std::strerror(error);
      return r;
    }
    r.path = name;
    return r;
  }
  std::string_view rest = path_var != nullptr ? path_var : "/usr/local/bin:/usr/bin:/bin";
  int first_error = 0;
  std::string first_path;
  for (;;) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    int error = ExecutableError(candidate);
    if (error == 0) {
      r.path = candidate;
      return r;
    }
    // As execvp: a file that is there but cannot be run is reported if nothing better is found.
    if (error != ENOENT && error != ENOTDIR && first_error == 0) {
      first_error = error;
      first_path = candidate;
    }
    if (colon == std::string_view::npos) break;
    rest = rest.substr(colon + 1);
  }
  if (first_error != 0) {
    r.exit_code = kExitCannotRun;
    r.error = first_path + ": " + std::strerror(first_error);
  } else {
    r.exit_code = kExitNotFound;
    r.error = "command not found in PATH";
  }
  return r;
}

Child Child::Start(const ChildOptions& options, const SignalForwarding& signals) {
  Child child;
  child.own_group_ = options.own_process_group;
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<char*> argv = Pointers(options.argv);
  std::vector<char*> envp = Pointers(options.env);
  std::vector<std::string> sh_args = {"/bin/sh", options.path};
  sh_args.insert(sh_args.end(), options.argv.begin() + (options.argv.empty() ? 0 : 1),
                 options.argv.end());
  std::vector<char*> sh_argv = Pointers(sh_args);
  const char* path = options.path.c_str();
  const pid_t parent = getpid();
  const bool restore_sigchld = signals.sigchld_was_ignored();
  const sigset_t mask = signals.original_mask();

  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    child.start_error_ = std::string("cannot create a pipe: ") + std::strerror(errno);
    child.start_exit_code_ = kExitCannotRun;
    return child;
  }
  pid_t pid = fork();
  if (pid < 0) {
    int error = errno;
    close(report[0]);
    close(report[1]);
    child.start_error_ = std::string("fork failed: ") + std::strerror(error);
    child.start_exit_code_ = kExitCannotRun;
    return child;
  }
  if (pid == 0) {
    close(report[0]);
    if (options.own_process_group) setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(kExitCannotRun);  // record is already gone
    if (restore_sigchld) {
      struct sigaction ign {};
      ign.sa_handler = SIG_IGN;
      sigaction(SIGCHLD, &ign, nullptr);
    }
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    execve(path, argv.data(), envp.data());
    int error = errno;
    if (error == ENOEXEC) {  // a script without "#!": run it with sh, as execvp and shells do
      execve("/bin/sh", sh_argv.data(), envp.data());
      error = errno;
    }
    ssize_t ignored = write(report[1], &error, sizeof error);
    (void)ignored;
    _exit(ExitCodeForErrno(error));
  }
  close(report[1]);
  if (options.own_process_group) setpgid(pid, pid);  // also here: no window where it has none
  int error = 0;
  ssize_t n;
  do {
    n = read(report[0], &error, sizeof error);
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == static_cast<ssize_t>(sizeof error)) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    child.start_error_ = std::strerror(error);
    child.start_exit_code_ = ExitCodeForErrno(error);
    return child;
  }
  child.pid_ = pid;
  return child;
}

int Child::Wait(const SignalForwarding& signals, const std::function<void(int, bool)>& on_signal) {
  for (;;) {
    // A SIGCHLD may have been merged with an earlier one: look first, then wait.
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) return status;
    if (r < 0 && errno != EINTR)
      return 1 << 8;  // ECHILD: someone else reaped it; say "exited with 1"
    siginfo_t info{};
    int sig = sigwaitinfo(&signals.waited(), &info);
    if (sig < 0 || sig == SIGCHLD) continue;
    bool from_terminal = info.si_code == SI_KERNEL;
    bool pass_on = !signals.was_ignored(sig) && !(from_terminal && !own_group_);
    if (pass_on) kill(own_group_ ? -pid_ : pid_, sig);
    if (on_signal) on_signal(sig, pass_on);
  }
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::string SignalName(int sig) {
  for (const Named& n : kSignalNames)
    if (n.sig == sig) return n.name;
  return "signal " + std::to_string(sig);
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exited with " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by " + SignalName(WTERMSIG(status)) +
           (WCOREDUMP(status) ? " (core dumped)" : "");
  return "ended with wait status " + std::to_string(status);
}

}  // namespace commlens::recorder::launcher
