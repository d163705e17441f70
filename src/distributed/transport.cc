#include "distributed/transport.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "distributed/messages.h"

namespace commlens::distributed {

namespace {

// MPI_Abort's exit code: the one the CLI gives a job that failed (cli/verbs.h kExitFailed).
constexpr int kAbortCode = 1;

}  // namespace

MpiSession::MpiSession() {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

MpiSession::~MpiSession() {
  MPI_Comm_free(&comm_);
  MPI_Finalize();
}

void Abort(const std::string& why, MPI_Comm comm) {
  fmt::print(stderr, "commlens: internal: {}\n", why);
  MPI_Abort(comm, kAbortCode);
  std::abort();  // MPI_Abort does not return; the compiler cannot know
}

void Nap(int polls) { std::this_thread::sleep_for(std::chrono::microseconds(std::min(200, 10 * polls))); }

void Await(MPI_Request* request) {
  for (int polls = 0;; ++polls) {
    int done = 0;
    MPI_Test(request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    Nap(polls);
  }
}

void Broadcast(std::vector<uint8_t>* bytes, MPI_Comm comm) {
  uint64_t n = bytes->size();
  MPI_Request r;
  MPI_Ibcast(&n, 1, MPI_UINT64_T, 0, comm, &r);
  Await(&r);
  bytes->resize(n);
  for (size_t at = 0; at < n; at += kChunk) {
    MPI_Ibcast(bytes->data() + at, static_cast<int>(std::min(kChunk, n - at)), MPI_BYTE, 0, comm, &r);
    Await(&r);
  }
}

int ShareExitCode(int code, MPI_Comm comm) {
  MPI_Request r;
  MPI_Ibcast(&code, 1, MPI_INT, 0, comm, &r);
  Await(&r);
  return code;
}

std::optional<std::vector<uint8_t>> TryReceive(int from, int tag, MPI_Comm comm, int* source) {
  int arrived = 0;
  MPI_Message probed;
  MPI_Status status;
  MPI_Improbe(from, tag, comm, &arrived, &probed, &status);
  if (!arrived) return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  std::vector<uint8_t> bytes(static_cast<size_t>(count));
  MPI_Mrecv(bytes.data(), count, MPI_BYTE, &probed, MPI_STATUS_IGNORE);
  if (source) *source = status.MPI_SOURCE;
  return bytes;
}

std::vector<uint8_t> ReceiveFrom(int from, int tag, MPI_Comm comm) {
  for (int polls = 0;; ++polls) {
    if (std::optional<std::vector<uint8_t>> bytes = TryReceive(from, tag, comm)) return std::move(*bytes);
    Nap(polls);
  }
}

void SendTo(int to, int tag, std::vector<uint8_t> bytes, MPI_Comm comm) {
  if (bytes.size() > static_cast<size_t>(INT32_MAX))
    Abort(fmt::format("a message of {} bytes to MPI process {} (at most 2 GiB)", bytes.size(), to), comm);
  MPI_Request r;
  MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, to, tag, comm, &r);
  Await(&r);
}

Sending::Sending(std::vector<uint8_t> message, MPI_Comm comm) : message_(std::move(message)) {
  for (size_t at = 0; at < message_.size(); at += kChunk) {
    requests_.emplace_back();
    MPI_Isend(message_.data() + at, static_cast<int>(std::min(kChunk, message_.size() - at)), MPI_BYTE, 0,
              at == 0 ? kFile : kMore, comm, &requests_.back());
  }
}

bool Sending::Done() {
  int done = 0;
  MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE);
  return done;
}

void ReceiveRest(int from, std::vector<uint8_t>* message, size_t have, MPI_Comm comm) {
  for (size_t at = have; at < message->size(); at += kChunk)
    MPI_Recv(message->data() + at, static_cast<int>(std::min(kChunk, message->size() - at)), MPI_BYTE, from, kMore,
             comm, MPI_STATUS_IGNORE);
}

}  // namespace commlens::distributed
