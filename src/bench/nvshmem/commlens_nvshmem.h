/* The interface between commlens and its NVSHMEM backend, libcommlens_nvshmem.so.
 *
 * NVSHMEM is loaded lazily: commlens itself never links it, so a
 * machine without NVSHMEM runs every other benchmark, and `--backend nvshmem` without it
 * is a clear message. nvshmem_library.cc loads libnvshmem_host.so.3 (global symbols),
 * then this plugin, and calls commlens_nvshmem_v1() for the table below. The plugin is
 * built only where CMake finds NVSHMEM's headers and device library (NVSHMEM_HOME, or
 * the pip package nvidia-nvshmem-cu13).
 *
 * Plain C, versioned by the symbol name. Every call returns 0 on success or an error
 * code, with the message in last_error(). Pointers are device pointers; streams are
 * cudaStream_t passed as void*.
 */
#ifndef COMMLENS_NVSHMEM_H_
#define COMMLENS_NVSHMEM_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COMMLENS_NVSHMEM_UID_BYTES 128
/* Columns per warp in the Jacobi boundary kernel, and so per nvshmem-nb signal. */
#define COMMLENS_NVSHMEM_JACOBI_SEGMENT 32

typedef struct {
  int64_t src_offset; /* the same layout as commlens::bench::PeerCopy */
  int64_t dst_offset;
  int64_t bytes;
} commlens_nvshmem_copy;

/* The boundary rows of one Jacobi iteration of this PE's rows (jacobi_config.h, variants
 * nvshmem and nvshmem-nb): rows 1 and |rows| of |a| are updated into |a_new| and put into
 * the neighbours' halo rows of their |a_new| by the kernel itself. The caller updates
 * rows 2..rows-1 with its own kernel on the same stream, and for nvshmem calls barrier. */
typedef struct {
  const float* a;
  float* a_new;
  int nx;
  int rows;
  int top_pe;       /* holds the rows above: receives our first row in its bottom halo */
  int bottom_pe;    /* holds the rows below: receives our last row in its top halo */
  int top_rows;     /* the top neighbour's row count: its bottom halo is its row top_rows + 1 */
  uint64_t* top_signal;     /* per 32-column segment, symmetric (nvshmem-nb) */
  uint64_t* bottom_signal;
  int64_t iteration;        /* 0-based; nvshmem-nb waits for signals >= iteration */
  int signal;               /* 0: blocking (a barrier follows), 1: nvshmem-nb */
} commlens_nvshmem_jacobi;

typedef struct {
  int abi_version; /* 1 */
  const char* (*last_error)(void);
  const char* (*version)(void); /* NVSHMEM's version, "3.4.5" */
  int (*get_uid)(void* uid);    /* COMMLENS_NVSHMEM_UID_BYTES, on the first PE */
  int (*init)(int rank, int nranks, const void* uid, int device);
  void (*finalize)(void);
  void* (*malloc)(size_t bytes); /* symmetric: every PE calls it with the same size */
  void (*free)(void* ptr);
  /* All-to-all (plan == NULL: uniform, bytes_per_peer each) or a variable exchange
   * (plan: one copy per PE, device memory), put by |ctas| CTAs; completes with a
   * barrier on the stream, so the data is in place when the stream reaches it. */
  int (*exchange)(const void* send, void* recv, size_t bytes_per_peer,
                  const commlens_nvshmem_copy* plan, int ctas, void* stream);
  int (*jacobi)(const commlens_nvshmem_jacobi* step, void* stream);  /* boundary rows */
  int (*barrier)(void* stream);
} commlens_nvshmem_api;

typedef const commlens_nvshmem_api* (*commlens_nvshmem_entry)(void);
const commlens_nvshmem_api* commlens_nvshmem_v1(void);

#ifdef __cplusplus
}
#endif

#endif /* COMMLENS_NVSHMEM_H_ */
