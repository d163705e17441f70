// MPI as `analyze --mpi` uses it: one session with a communicator of its own, byte
// messages of any size, and waiting that leaves the cores to the processes importing.
//
// Threading: MPI is called from the main thread only (MPI_THREAD_FUNNELED). A process
// that waits polls its MPI requests with short sleeps (Nap) instead of spinning in a
// blocking call, so N processes on fewer cores leave the cores to those importing.
#pragma once

// The C API only: Open MPI's and MPICH's headers would pull in the C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace commlens::distributed {

// MPI_Init_thread .. MPI_Finalize, with a communicator of our own.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

// Stops every process of the job: "commlens: internal: |why|" on stderr, then MPI_Abort.
// For faults only (both ends run this build, so a message that does not decode is one),
// never for bad input.
[[noreturn]] void Abort(const std::string& why, MPI_Comm comm);

// A short sleep that grows with the number of empty polls, to 200 us: a waiting process
// costs next to no CPU and still drives its sends and answers within a fraction of a
// millisecond.
void Nap(int polls);

// Waits for |request| without keeping a core busy (a blocking MPI call spins).
void Await(MPI_Request* request);

// Rank 0's |bytes| on every process.
void Broadcast(std::vector<uint8_t>* bytes, MPI_Comm comm);

// Rank 0's |code| on every process.
int ShareExitCode(int code, MPI_Comm comm);

// A message from |from| (or MPI_ANY_SOURCE) with |tag| if one has come; |*source| is its
// sender when given.
std::optional<std::vector<uint8_t>> TryReceive(int from, int tag, MPI_Comm comm, int* source = nullptr);

// A message from |from| with |tag|, once it has come.
std::vector<uint8_t> ReceiveFrom(int from, int tag, MPI_Comm comm);

// Sends |bytes| (at most 2 GiB) and waits until they are on their way.
void SendTo(int to, int tag, std::vector<uint8_t> bytes, MPI_Comm comm);

// A file message on its way to rank 0, in pieces of kChunk (kFile, then kMore): kept
// until its sends complete.
class Sending {
 public:
  Sending(std::vector<uint8_t> message, MPI_Comm comm);
  Sending(Sending&&) = default;
  bool Done();

 private:
  std::vector<uint8_t> message_;
  std::vector<MPI_Request> requests_;
};

// The rest of a message that Sending sent in pieces: |message| holds the first piece
// (|have| bytes) and is sized to the whole; the kMore pieces from |from| fill it.
void ReceiveRest(int from, std::vector<uint8_t>* message, size_t have, MPI_Comm comm);

}  // namespace commlens::distributed
