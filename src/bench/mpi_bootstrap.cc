#include "bench/mpi_bootstrap.h"

// The C API only: Open MPI's deprecated C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <fmt/format.h>

namespace commlens::bench {

namespace {

Status MpiStatus(int code, const char* call) {
  if (code == MPI_SUCCESS) return OkStatus();
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  return Error(fmt::format("{} failed: {}", call, text));
}

class MpiBootstrap final : public Bootstrap {
 public:
  explicit MpiBootstrap(bool owns_mpi) : owns_mpi_(owns_mpi) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiBootstrap() override {
    if (owns_mpi_) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string_view transport() const override { return "mpi"; }

  Status Broadcast(std::span<std::byte> data) override {
    return MpiStatus(MPI_Bcast(data.data(), static_cast<int>(data.size()), MPI_BYTE, 0,
                               MPI_COMM_WORLD),
                     "MPI_Bcast");
  }

  Status AllGather(std::span<const std::byte> mine, std::vector<std::byte>* all) override {
    all->resize(mine.size() * size_);
    // MPI_Allgather with zero bytes is valid but some MPIs dislike null buffers.
    std::byte dummy{};
    const void* send = mine.empty() ? &dummy : mine.data();
    void* recv = all->empty() ? &dummy : all->data();
    return MpiStatus(MPI_Allgather(send, static_cast<int>(mine.size()), MPI_BYTE, recv,
                                   static_cast<int>(mine.size()), MPI_BYTE, MPI_COMM_WORLD),
                     "MPI_Allgather");
  }

 private:
  bool owns_mpi_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

bool MpiSupportCompiled() { return true; }

Result<std::unique_ptr<Bootstrap>> CreateMpiBootstrap() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    COMMLENS_RETURN_IF_ERROR(
        MpiStatus(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided),
                  "MPI_Init_thread"));
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return std::unique_ptr<Bootstrap>(new MpiBootstrap(!initialized));
}

}  // namespace commlens::bench
