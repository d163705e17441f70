// OutputFile, the one writer of output files: whole or absent under the final name, a
// device written in place (never replaced by a file), a link kept, gzip on the way.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifndef COMMLENS_NO_ZLIB
#include <zlib.h>
#endif

#include <filesystem>
#include <string>

#include "common/file.h"
#include "common/output_file.h"

namespace commlens {
namespace {

namespace fs = std::filesystem;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("output_file_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  size_t Entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {})); }

  fs::path dir_;
};

TEST_F(OutputFileTest, AppearsOnlyWhenCommitted) {
  const std::string path = Path("out.txt");
  {
    Result<std::unique_ptr<OutputFile>> f = OutputFile::Create(path);
    ASSERT_TRUE(f.ok()) << f.status().message();
    (*f)->Write("hello ");
    (*f)->Put('w');
    (*f)->Write(std::string(3 << 20, 'x'));  // more than the buffer
    EXPECT_FALSE(fs::exists(path));
    ASSERT_TRUE((*f)->Commit().ok());
  }
  EXPECT_EQ(fs::file_size(path), 7u + (3u << 20));
  EXPECT_EQ(Entries(), 1u);  // no temporary file left
  {
    Result<std::unique_ptr<OutputFile>> f = OutputFile::Create(path);
    ASSERT_TRUE(f.ok());
    (*f)->Write("never committed");
  }
  EXPECT_EQ(fs::file_size(path), 7u + (3u << 20)) << "the old file stays until a new one is whole";
  EXPECT_EQ(Entries(), 1u);
}

TEST_F(OutputFileTest, AFullDiskIsAnErrorNamingThePathAndLeavesNothing) {
  const std::string path = Path("full.txt");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);  // writes past the limit then fail with EFBIG, as on a full disk
    rlimit limit{1 << 16, 1 << 16};
    setrlimit(RLIMIT_FSIZE, &limit);
    Status s = WriteWholeFile(path, std::string(1 << 17, 'x'));
    _exit(!s.ok() && s.message().find(path + ": cannot write: File too large") == 0 ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(Entries(), 0u);
}

TEST_F(OutputFileTest, AMissingFolderIsAnErrorNamingThePath) {
  Status s = WriteWholeFile(Path("no/such/dir/out.txt"), "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(Path("no/such/dir/out.txt") + ": cannot create"), std::string::npos) << s.message();
}

// `analyze --json /dev/null` (the performance runs) or a pipe: a rename onto it would
// replace the device with a file. A FIFO stands in for /dev/null here (a test run on a
// writer that renames must not replace the machine's /dev/null).
TEST_F(OutputFileTest, ADeviceIsWrittenInPlace) {
  const std::string fifo = Path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  pid_t reader = fork();
  ASSERT_GE(reader, 0);
  if (reader == 0) {
    alarm(10);  // a writer that replaced the FIFO never opens it: do not wait forever
    FILE* in = std::fopen(fifo.c_str(), "r");
    char buf[16] = {};
    size_t n = in ? std::fread(buf, 1, sizeof(buf), in) : 0;
    _exit(std::string(buf, n) == "through" ? 0 : 1);
  }
  ASSERT_TRUE(WriteWholeFile(fifo, "through").ok());
  int status = 0;
  waitpid(reader, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST_F(OutputFileTest, ALinkStaysAndItsFileIsReplaced) {
  const std::string file = Path("real.txt"), link = Path("link.txt");
  ASSERT_TRUE(WriteWholeFile(file, "old").ok());
  fs::create_symlink(file, link);
  ASSERT_TRUE(WriteWholeFile(link, "new").ok());
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(*ReadWholeFile(file), "new");
  EXPECT_EQ(Entries(), 2u);
}

#ifdef COMMLENS_NO_ZLIB
TEST_F(OutputFileTest, GzipIsRefusedWithoutZlib) {
  Result<std::unique_ptr<OutputFile>> f = OutputFile::Create(Path("out.gz"), /*gzip=*/true);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("without zlib"), std::string::npos);
}
#else
TEST_F(OutputFileTest, GzipHoldsTheBytes) {
  const std::string path = Path("out.gz");
  std::string text;
  for (int i = 0; i < 200000; ++i) text += "{\"name\":\"ncclDevKernel_AllReduce\",\"ts\":" + std::to_string(i) + "},\n";
  {
    Result<std::unique_ptr<OutputFile>> f = OutputFile::Create(path, /*gzip=*/true);
    ASSERT_TRUE(f.ok()) << f.status().message();
    (*f)->Write(text);
    ASSERT_TRUE((*f)->Commit().ok());
  }
  gzFile in = gzopen(path.c_str(), "rb");
  ASSERT_NE(in, nullptr);
  std::string back(text.size() + 16, '\0');
  const int n = gzread(in, back.data(), static_cast<unsigned>(back.size()));
  gzclose(in);
  back.resize(static_cast<size_t>(std::max(n, 0)));
  EXPECT_EQ(back, text);
  EXPECT_LT(fs::file_size(path), text.size() / 4);
}
#endif

}  // namespace
}  // namespace commlens
