//===- RuntimeImpl.h - Device and bundle internals ---------------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The implementation classes behind Device and Bundle, shared by
// Runtime.cpp (sessions) and Launcher.cpp (launches on the caller's memory).
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_RUNTIME_LIB_RUNTIMEIMPL_H
#define NVFP4_RUNTIME_LIB_RUNTIMEIMPL_H

#include "CudaDriver.h"
#include "Internal.h"

#include <memory>
#include <string>
#include <vector>

namespace nvfp4::runtime {

/// A device's primary context and what the runtime checks against.
class DeviceImpl {
public:
  const detail::CudaDriver *driver = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0;
  int driverVersion = 0;
  int maxSharedOptin = 0;

  Status cuda(CUresult result, const std::string &what) const {
    return detail::cudaError(*driver, result, what);
  }

  /// Makes the primary context current on the calling thread.
  Status makeCurrent() const {
    CUresult r = driver->cuCtxSetCurrent(context);
    if (r != CUDA_SUCCESS)
      return cuda(r, "making device " + std::to_string(ordinal) +
                         "'s context current");
    return Status::success();
  }

  /// "device 0 (NVIDIA H200)".
  std::string label() const {
    return "device " + std::to_string(ordinal) + " (" + name + ")";
  }

  ~DeviceImpl() {
    if (context)
      driver->cuDevicePrimaryCtxRelease(device);
  }
};


/// A loaded module and one CUfunction per launch.
class BundleImpl {
public:
  std::shared_ptr<Device> device;
  Manifest manifest;
  CUmodule module = nullptr;
  /// One function per launch, in manifest order.
  std::vector<CUfunction> functions;

  DeviceImpl &dev() const { return device->impl(); }

  ~BundleImpl() {
    if (module && dev().makeCurrent().ok())
      dev().driver->cuModuleUnload(module);
  }
};


} // namespace nvfp4::runtime

#endif // NVFP4_RUNTIME_LIB_RUNTIMEIMPL_H
