//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The runtime does not link libcuda: a program linked against it would not
// even start on a machine without the driver (the loader stops at
// libcuda.so.1), which is where the "no CUDA device" diagnostic matters
// most. Instead the driver is dlopen'ed on first use and the few entry
// points we need are looked up by their versioned names (cuMemAlloc_v2,
// ...), with the prototypes of CUDA 13's cuda.h. $NVFP4_CUDA_DRIVER names
// another library to load (the tests point it at CUDA's stub, whose cuInit
// fails like a machine without a GPU).
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_RUNTIME_LIB_CUDADRIVER_H
#define NVFP4_RUNTIME_LIB_CUDADRIVER_H

#include "nvfp4/Runtime/Runtime.h"

#include <cuda.h>

#include <string>

namespace nvfp4::runtime::detail {

/// Entry points of the driver. Each member has the type of the cuda.h
/// function of the same name (after cuda.h's renaming to _v2 etc.).
struct CudaDriver {
#define NVFP4_CUDA_FUNCTIONS(X)                                                \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxSetCurrent)                                                           \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncSetAttribute)                                                        \
  X(cuFuncGetAttribute)                                                        \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemcpyHtoD)                                                              \
  X(cuMemcpyDtoH)                                                              \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemsetD8Async)                                                           \
  X(cuMemsetD16Async)                                                          \
  X(cuMemsetD32Async)                                                          \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime)                                                        \
  X(cuLaunchKernel)

/// Entry points only some bundles or APIs need; they are null when the
/// driver lacks them (cuTensorMapEncodeTiled: CUDA 12.0; the other two are
/// as old as CUDA itself but absent from minimal stand-ins), and the
/// session or launcher that needs one says so.
#define NVFP4_CUDA_OPTIONAL_FUNCTIONS(X)                                       \
  X(cuTensorMapEncodeTiled)                                                    \
  X(cuStreamWaitEvent)                                                         \
  X(cuMemsetD2D32Async)

#define NVFP4_CUDA_MEMBER(name) decltype(&::name) name = nullptr;
  NVFP4_CUDA_FUNCTIONS(NVFP4_CUDA_MEMBER)
  NVFP4_CUDA_OPTIONAL_FUNCTIONS(NVFP4_CUDA_MEMBER)
#undef NVFP4_CUDA_MEMBER

  void *handle = nullptr;
  /// The library that was loaded (for messages).
  std::string path;
};

/// Loads the driver and calls cuInit(0) once per process. On failure the
/// status (NoDevice) is returned again by every later call.
Expected<const CudaDriver *> getDriver();

/// cuDriverGetVersion's answer (e.g. 13000 for CUDA 13.0), or 0 when the
/// driver cannot say.
inline int driverVersion(const CudaDriver &driver) {
  int version = 0;
  if (driver.cuDriverGetVersion(&version) != CUDA_SUCCESS)
    return 0;
  return version;
}

/// "CUDA_ERROR_X (text)" for `result`.
std::string describeCudaError(const CudaDriver &driver, CUresult result);

/// Status for a failed driver call: "<what>: CUDA_ERROR_X (text)". Out of
/// memory errors get ErrorCode::OutOfMemory, the rest `code`.
Status cudaError(const CudaDriver &driver, CUresult result,
                 const std::string &what, ErrorCode code = ErrorCode::Cuda);

} // namespace nvfp4::runtime::detail

#endif // NVFP4_RUNTIME_LIB_CUDADRIVER_H
