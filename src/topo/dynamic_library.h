// A shared library opened with dlopen and closed on destruction, with typed symbol lookup.
// Vendor libraries (NVML, the CUDA driver) are loaded this way so that commlens has no
// link-time dependency on them.
#pragma once

#include <dlfcn.h>

#include <memory>
#include <string>

namespace commlens::topo {

class DynamicLibrary {
 public:
  // nullptr, with dlerror()'s text in |error|, when the library cannot be opened.
  static std::unique_ptr<DynamicLibrary> Open(const char* name, std::string* error) {
    void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      *error = why ? why : "dlopen failed";
      return nullptr;
    }
    return std::unique_ptr<DynamicLibrary>(new DynamicLibrary(handle));
  }
  ~DynamicLibrary() {
    if (close_) dlclose(handle_);
  }
  // Never dlclose: the CUDA driver starts threads in cuInit that must not outlive its code.
  void KeepLoaded() { close_ = false; }
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  // The function |name| as type Fn, or nullptr when the library lacks it.
  template <typename Fn>
  Fn Find(const char* name) const {
    return reinterpret_cast<Fn>(dlsym(handle_, name));
  }

 private:
  explicit DynamicLibrary(void* handle) : handle_(handle) {}
  void* handle_;
  bool close_ = true;
};

}  // namespace commlens::topo
