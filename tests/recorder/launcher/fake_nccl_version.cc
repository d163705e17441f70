// A stand-in libnccl.so.2 with only ncclGetVersion, for ProbeNccl's test: it reports the
// version the build gives it (FAKE_NCCL_VERSION_CODE).
extern "C" __attribute__((visibility("default"))) int ncclGetVersion(int* version) {
  *version = FAKE_NCCL_VERSION_CODE;
  return 0;
}
