//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -----------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace nvfp4::runtime;
using namespace nvfp4::runtime::detail;

#define NVFP4_STRINGIFY(x) #x
#define NVFP4_EXPANDED_NAME(x) NVFP4_STRINGIFY(x)

namespace {

/// Looks up `name` (cuda.h's versioned name); a few entry points got a
/// versioned name late, and older drivers only have the plain one with the
/// same prototype.
template <typename F> bool lookup(void *handle, F &function, const char *name) {
  void *symbol = dlsym(handle, name);
  if (!symbol) {
    static const char *const fallbacks[][2] = {
        {"cuEventElapsedTime_v2", "cuEventElapsedTime"},
    };
    for (const auto &fallback : fallbacks)
      if (std::strcmp(name, fallback[0]) == 0)
        symbol = dlsym(handle, fallback[1]);
  }
  function = reinterpret_cast<F>(symbol);
  return symbol != nullptr;
}

struct LoadedDriver {
  CudaDriver driver;
  Status status = Status::success();
};

LoadedDriver loadDriver() {
  LoadedDriver loaded;
  CudaDriver &driver = loaded.driver;

  std::string tried;
  const char *override = std::getenv("NVFP4_CUDA_DRIVER");
  if (override && *override) {
    driver.handle = dlopen(override, RTLD_NOW | RTLD_LOCAL);
    driver.path = override;
    if (!driver.handle)
      tried = dlerror();
  } else {
    for (const char *candidate : {"libcuda.so.1", "libcuda.so"}) {
      driver.handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL);
      if (driver.handle) {
        driver.path = candidate;
        break;
      }
      if (tried.empty())
        tried = dlerror();
    }
  }
  if (!driver.handle) {
    loaded.status = Status::error(
        ErrorCode::NoDevice,
        "no CUDA device: the CUDA driver library could not be loaded (" +
            tried + ")");
    return loaded;
  }

#define NVFP4_CUDA_LOOKUP(name)                                                \
  if (!lookup(driver.handle, driver.name, NVFP4_EXPANDED_NAME(name))) {        \
    loaded.status = Status::error(                                             \
        ErrorCode::NoDevice,                                                   \
        std::string("no CUDA device: the CUDA driver ") + driver.path +        \
            " is too old (it has no " NVFP4_EXPANDED_NAME(name) ")");          \
    return loaded;                                                             \
  }
  NVFP4_CUDA_FUNCTIONS(NVFP4_CUDA_LOOKUP)
#undef NVFP4_CUDA_LOOKUP
#define NVFP4_CUDA_LOOKUP_OPTIONAL(name)                                       \
  lookup(driver.handle, driver.name, NVFP4_EXPANDED_NAME(name));
  NVFP4_CUDA_OPTIONAL_FUNCTIONS(NVFP4_CUDA_LOOKUP_OPTIONAL)
#undef NVFP4_CUDA_LOOKUP_OPTIONAL

  CUresult result = driver.cuInit(0);
  if (result != CUDA_SUCCESS) {
    loaded.status =
        Status::error(ErrorCode::NoDevice,
                      "no CUDA device: " + describeCudaError(driver, result) +
                          " from cuInit");
    return loaded;
  }
  return loaded;
}

} // namespace

Expected<const CudaDriver *> nvfp4::runtime::detail::getDriver() {
  // Loaded once; the library stays loaded for the life of the process
  // (unloading a CUDA driver is not supported).
  static LoadedDriver *loaded = new LoadedDriver(loadDriver());
  if (!loaded->status.ok())
    return loaded->status;
  return &loaded->driver;
}

/// Names (and texts) of the errors most likely to come from a driver that
/// cannot name them itself: CUDA's stub library answers every call,
/// cuGetErrorName included, with CUDA_ERROR_STUB_LIBRARY.
static const char *fallbackErrorName(CUresult result, const char *&text) {
#define NVFP4_CUDA_ERROR(e, t)                                                 \
  case e:                                                                      \
    text = t;                                                                  \
    return #e;
  switch (result) {
    NVFP4_CUDA_ERROR(CUDA_ERROR_INVALID_VALUE, "invalid argument")
    NVFP4_CUDA_ERROR(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")
    NVFP4_CUDA_ERROR(CUDA_ERROR_NOT_INITIALIZED, "initialization error")
    NVFP4_CUDA_ERROR(CUDA_ERROR_DEINITIALIZED, "driver shutting down")
    NVFP4_CUDA_ERROR(CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library")
    NVFP4_CUDA_ERROR(CUDA_ERROR_DEVICE_UNAVAILABLE,
                     "CUDA-capable device(s) is/are busy or unavailable")
    NVFP4_CUDA_ERROR(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected")
    NVFP4_CUDA_ERROR(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal")
    NVFP4_CUDA_ERROR(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
                     "system has unsupported display driver / cuda driver "
                     "combination")
    NVFP4_CUDA_ERROR(CUDA_ERROR_OPERATING_SYSTEM, "OS call failed")
    NVFP4_CUDA_ERROR(CUDA_ERROR_UNKNOWN, "unknown error")
  default:
    text = nullptr;
    return nullptr;
  }
#undef NVFP4_CUDA_ERROR
}

std::string nvfp4::runtime::detail::describeCudaError(const CudaDriver &driver,
                                                      CUresult result) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (!driver.cuGetErrorName ||
      driver.cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = nullptr;
  if (!driver.cuGetErrorString ||
      driver.cuGetErrorString(result, &text) != CUDA_SUCCESS || !text)
    text = nullptr;
  if (!name) {
    const char *fallbackText = nullptr;
    name = fallbackErrorName(result, fallbackText);
    if (!text)
      text = fallbackText;
  }
  std::string message =
      name ? name : "CUDA error " + std::to_string(static_cast<int>(result));
  if (text)
    message += std::string(" (") + text + ")";
  return message;
}

Status nvfp4::runtime::detail::cudaError(const CudaDriver &driver,
                                         CUresult result,
                                         const std::string &what,
                                         ErrorCode code) {
  if (result == CUDA_ERROR_OUT_OF_MEMORY)
    code = ErrorCode::OutOfMemory;
  return Status::error(code, what + ": " + describeCudaError(driver, result));
}
