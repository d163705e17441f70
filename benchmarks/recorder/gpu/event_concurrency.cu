// Does a CUDA event recorded around a kernel on one stream hold that kernel back behind
// another stream's work (issue 28)? The launch timer puts a timing event before and after
// each NCCL kernel on NCCL's stream while the training's compute runs on another. Here a
// kernel spins on stream A for SPIN_US; on stream B a kernel that stamps the GPU clock is
// launched right after, bare or between two events (timing on, or off), and the program
// prints how long after A's start B's kernel started (median of the repetitions, µs) and
// the B events' elapsed time and the host time of B's launch with its events. B starting
// at once means the events do not serialize the streams; B starting when A ends means
// they do. Then the same with B waiting for A first, as NCCL's stream waits for the
// compute stream: does an event recorded behind such a wait cost the host more?
//
//   event_concurrency [repetitions] [spin_us]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

__device__ unsigned long long GlobalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void Spin(unsigned long long ns, unsigned long long* out) {
  const unsigned long long start = GlobalTimer();
  while (GlobalTimer() - start < ns) {
  }
  out[0] = start;
  out[1] = GlobalTimer();
}

__global__ void Stamp(unsigned long long* out) { out[0] = GlobalTimer(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 200;
  const unsigned long long spin_ns = (argc > 2 ? std::atoll(argv[2]) : 100) * 1000ull;
  unsigned long long* stamps = nullptr;
  if (cudaMallocHost(&stamps, 4 * sizeof(unsigned long long)) != cudaSuccess) {
    std::fprintf(stderr, "event_concurrency: no GPU\n");
    return 1;
  }
  cudaStream_t a, b;
  cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
  cudaEvent_t timing[2], plain[2];
  for (int i = 0; i < 2; ++i) {
    cudaEventCreate(&timing[i]);
    cudaEventCreateWithFlags(&plain[i], cudaEventDisableTiming);
  }
  cudaEvent_t a_done;
  cudaEventCreateWithFlags(&a_done, cudaEventDisableTiming);
  const char* modes[] = {"bare", "timing events", "events without timing"};
  // |wait|: B first waits for A's kernel (as PyTorch makes NCCL's stream wait for the
  // compute stream before a collective), so B's kernel starts when A's ends; what is
  // measured then is the host time of B's launch and events, which should not wait.
  // |wait| 2: A's kernel runs on B itself, ahead of B's (NCCL's stream still running the
  // previous collective when the next is launched).
  const char* placements[] = {"B independent of A", "B waits for A", "A's kernel on B"};
  for (int wait = 0; wait < 3; ++wait) {
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<double> delay, elapsed, host;
      for (int r = 0; r < reps + 10; ++r) {
        Spin<<<1, 32, 0, wait == 2 ? b : a>>>(spin_ns, stamps);
        if (wait == 1) {
          cudaEventRecord(a_done, a);
          cudaStreamWaitEvent(b, a_done, 0);
        }
        cudaEvent_t* ev = mode == 1 ? timing : mode == 2 ? plain : nullptr;
        const auto t0 = std::chrono::steady_clock::now();
        if (ev) cudaEventRecord(ev[0], b);
        Stamp<<<1, 32, 0, b>>>(stamps + 2);
        if (ev) cudaEventRecord(ev[1], b);
        const auto t1 = std::chrono::steady_clock::now();
        cudaDeviceSynchronize();
        if (r < 10) continue;  // warm-up
        host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        delay.push_back(static_cast<double>(static_cast<long long>(stamps[2] - stamps[0])) / 1e3);
        float ms = 0;
        if (mode == 1 && cudaEventElapsedTime(&ms, timing[0], timing[1]) == cudaSuccess) elapsed.push_back(ms * 1e3);
      }
      std::printf("{\"mode\":\"%s\",\"placement\":\"%s\",\"spin_us\":%.0f,\"b_start_after_a_us\":%.2f,"
                  "\"b_events_elapsed_us\":%.2f,\"host_us\":%.2f}\n",
                  modes[mode], placements[wait], spin_ns / 1e3, Median(delay), Median(elapsed), Median(host));
    }
  }
  return 0;
}
