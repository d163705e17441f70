// What the Nsight Systems importer's tests share: scratch folders, the samples inflated,
// SQL run on an export, environment variables set for one test, and code run in a child
// process (under a memory limit, or as an unprivileged user).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

namespace commlens::importers::nsys_test {

namespace fs = std::filesystem;

inline const std::string kSamples = std::string(COMMLENS_SOURCE_DIR) + "/examples/traces/nsys-1gpu/";

// A scratch folder removed with the object.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string t = (fs::temp_directory_path() / "commlens-nsys-test-XXXXXX").string();
    path = mkdtemp(t.data());
  }
  ~ScratchDir() { fs::remove_all(path); }
};

// The sample's SQLite, inflated into |dir|.
inline std::string Inflate(const std::string& gz, const fs::path& dir, const std::string& name) {
  gzFile in = gzopen(gz.c_str(), "rb");
  EXPECT_NE(in, nullptr) << gz;
  const std::string out_path = (dir / name).string();
  std::ofstream out(out_path, std::ios::binary);
  char buf[1 << 16];
  for (int n; (n = gzread(in, buf, sizeof buf)) > 0;) out.write(buf, n);
  gzclose(in);
  return out_path;
}

// One integer from a query on the export, straight through SQLite.
inline int64_t QueryInt(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}

inline void Exec(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_close(db);
}

// Sets (or, with nullopt, unsets) an environment variable until the object goes.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// What a child process said: how it ended and what |fn| returned ("" for success).
struct ChildOutcome {
  bool exited = false;  // false: killed by a signal (an abort, std::bad_alloc uncaught)
  int code = 0;
  std::string message;
};

// Runs |fn| in a child process with |setup| applied first (a memory limit, a user).
inline ChildOutcome InChild(const std::function<void()>& setup, const std::function<std::string()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) return {false, -1, "pipe failed"};
  pid_t pid = fork();
  if (pid == 0) {  // never returns into the test runner, whatever |fn| does
    close(fds[0]);
    setup();
    std::string message;
    try {
      message = fn();
    } catch (const std::exception& e) {
      message = std::string("exception: ") + e.what();
    }
    if (!message.empty() && write(fds[1], message.data(), message.size()) < 0) _exit(3);
    _exit(message.empty() ? 0 : 1);
  }
  close(fds[1]);
  ChildOutcome out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.message.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  out.exited = WIFEXITED(status);
  out.code = out.exited ? WEXITSTATUS(status) : WTERMSIG(status);
  return out;
}

// The process's address space now plus |extra| bytes, as a limit for a child.
inline std::function<void()> AddressSpaceLimit(uint64_t extra) {
  return [extra] {
    std::ifstream statm("/proc/self/statm");
    uint64_t pages = 0;
    statm >> pages;
    const rlim_t limit = pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) + extra;
    rlimit r{limit, limit};
    setrlimit(RLIMIT_AS, &r);
  };
}

}  // namespace commlens::importers::nsys_test
