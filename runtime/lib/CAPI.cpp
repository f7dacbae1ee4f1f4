//===- CAPI.cpp - C API of the nvfp4 kernel runtime -----------------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Thin wrappers over the C++ API: handles own shared_ptr/unique_ptr, every
// failure is stored in a thread-local message and returned as a status code.
// Nothing in the runtime throws on purpose; an std::bad_alloc is caught at
// this boundary.
//
//===----------------------------------------------------------------------===//

#include "nvfp4-c/Runtime.h"
#include "nvfp4/Runtime/Runtime.h"

#include <exception>
#include <new>
#include <string>

using namespace nvfp4::runtime;

struct nvfp4rtBundle_ {
  std::shared_ptr<Bundle> bundle;
};

struct nvfp4rtSession_ {
  std::unique_ptr<Session> session;
};

struct nvfp4rtLauncher_ {
  std::unique_ptr<Launcher> launcher;
};

namespace {

/// A DeviceAllocator over the C API's two function pointers.
class CAllocator final : public DeviceAllocator {
public:
  CAllocator(nvfp4rtAllocateFunction allocateFn,
             nvfp4rtDeallocateFunction deallocateFn, void *userData)
      : allocateFn(allocateFn), deallocateFn(deallocateFn),
        userData(userData) {}

  Expected<uint64_t> allocate(size_t bytes, CUstream_st *stream) override {
    uint64_t address = 0;
    int status = allocateFn(userData, bytes, stream, &address);
    if (status != NVFP4RT_SUCCESS)
      return Status::error(ErrorCode::OutOfMemory,
                           "the caller's allocator failed to allocate a " +
                               std::to_string(bytes) +
                               "-byte workspace (status " +
                               std::to_string(status) + ")");
    return address;
  }
  void deallocate(uint64_t address, size_t bytes,
                  CUstream_st *stream) override {
    deallocateFn(userData, address, bytes, stream);
  }

private:
  nvfp4rtAllocateFunction allocateFn;
  nvfp4rtDeallocateFunction deallocateFn;
  void *userData;
};

} // namespace

static_assert(int(ErrorCode::InvalidArgument) ==
                      NVFP4RT_ERROR_INVALID_ARGUMENT &&
                  int(ErrorCode::Io) == NVFP4RT_ERROR_IO &&
                  int(ErrorCode::InvalidManifest) ==
                      NVFP4RT_ERROR_INVALID_MANIFEST &&
                  int(ErrorCode::NoDevice) == NVFP4RT_ERROR_NO_DEVICE &&
                  int(ErrorCode::Cuda) == NVFP4RT_ERROR_CUDA &&
                  int(ErrorCode::OutOfMemory) == NVFP4RT_ERROR_OUT_OF_MEMORY,
              "C status codes and ErrorCode disagree");

static thread_local std::string lastError;

static int report(const Status &status) {
  if (status.ok())
    return NVFP4RT_SUCCESS;
  lastError = status.message();
  return static_cast<int>(status.code());
}

static int invalid(const std::string &message) {
  return report(Status::error(ErrorCode::InvalidArgument, message));
}

/// Runs the body of a C entry point; a C++ exception (only std::bad_alloc
/// is expected: the runtime reports everything else as a Status) becomes a
/// status code instead of unwinding into C.
template <typename Body> static int guarded(const char *function, Body body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return report(
        Status::error(ErrorCode::OutOfMemory,
                      std::string(function) + ": out of host memory"));
  } catch (const std::exception &e) {
    return report(
        Status::error(ErrorCode::InvalidArgument,
                      std::string(function) + ": internal error: " + e.what()));
  } catch (...) {
    return report(Status::error(ErrorCode::InvalidArgument,
                                std::string(function) + ": internal error"));
  }
}

#define NVFP4RT_REQUIRE(pointer, function)                                     \
  if (!(pointer))                                                              \
    return invalid(std::string(function) + ": " #pointer " is NULL");

extern "C" {

int nvfp4rtGetApiVersion(void) { return NVFP4RT_API_VERSION; }

const char *nvfp4rtGetLastError(void) { return lastError.c_str(); }

const char *nvfp4rtStatusName(int status) {
  if (status < 0 || status > int(ErrorCode::OutOfMemory))
    return "unknown status";
  return errorCodeName(static_cast<ErrorCode>(status));
}

int nvfp4rtManifestDescribe(const char *manifestPath,
                            const char **description) {
  return guarded("nvfp4rtManifestDescribe", [&]() -> int {
    NVFP4RT_REQUIRE(manifestPath, "nvfp4rtManifestDescribe");
    NVFP4RT_REQUIRE(description, "nvfp4rtManifestDescribe");
    static thread_local std::string text;
    Expected<Manifest> manifest = Manifest::load(manifestPath);
    if (!manifest.ok())
      return report(manifest.status());
    text = manifest->describe();
    *description = text.c_str();
    return NVFP4RT_SUCCESS;
  });
}

static int finishLoad(Expected<std::shared_ptr<Bundle>> loaded,
                      nvfp4rtBundle *bundle) {
  if (!loaded.ok())
    return report(loaded.status());
  *bundle = new nvfp4rtBundle_{loaded.take()};
  return NVFP4RT_SUCCESS;
}

int nvfp4rtBundleLoad(const char *imagePath, const char *manifestPath,
                      int device, nvfp4rtBundle *bundle) {
  return guarded("nvfp4rtBundleLoad", [&]() -> int {
    NVFP4RT_REQUIRE(imagePath, "nvfp4rtBundleLoad");
    NVFP4RT_REQUIRE(manifestPath, "nvfp4rtBundleLoad");
    NVFP4RT_REQUIRE(bundle, "nvfp4rtBundleLoad");
    *bundle = nullptr;
    return finishLoad(Bundle::load(imagePath, manifestPath, device), bundle);
  });
}

int nvfp4rtBundleLoadFromMemory(const void *image, size_t imageBytes,
                                const char *manifestJson, size_t manifestBytes,
                                int device, nvfp4rtBundle *bundle) {
  return guarded("nvfp4rtBundleLoadFromMemory", [&]() -> int {
    NVFP4RT_REQUIRE(image, "nvfp4rtBundleLoadFromMemory");
    NVFP4RT_REQUIRE(manifestJson, "nvfp4rtBundleLoadFromMemory");
    NVFP4RT_REQUIRE(bundle, "nvfp4rtBundleLoadFromMemory");
    *bundle = nullptr;
    Expected<Manifest> manifest =
        Manifest::parse(std::string_view(manifestJson, manifestBytes));
    if (!manifest.ok())
      return report(manifest.status());
    std::string bytes(static_cast<const char *>(image), imageBytes);
    if (detectImageKind(bytes) == ImageKind::Unknown)
      return invalid("the kernel image is not a cubin, fatbin or PTX");
    Expected<std::shared_ptr<Device>> opened = Device::open(device);
    if (!opened.ok())
      return report(opened.status());
    return finishLoad(
        Bundle::loadFromMemory(*opened, std::move(bytes), manifest.take()),
        bundle);
  });
}

void nvfp4rtBundleDestroy(nvfp4rtBundle bundle) { delete bundle; }

int nvfp4rtBundleGetDeviceName(nvfp4rtBundle bundle, const char **name) {
  return guarded("nvfp4rtBundleGetDeviceName", [&]() -> int {
    NVFP4RT_REQUIRE(bundle, "nvfp4rtBundleGetDeviceName");
    NVFP4RT_REQUIRE(name, "nvfp4rtBundleGetDeviceName");
    *name = bundle->bundle->device().name().c_str();
    return NVFP4RT_SUCCESS;
  });
}

int nvfp4rtBundleGetNumArguments(nvfp4rtBundle bundle, int64_t *count) {
  return guarded("nvfp4rtBundleGetNumArguments", [&]() -> int {
    NVFP4RT_REQUIRE(bundle, "nvfp4rtBundleGetNumArguments");
    NVFP4RT_REQUIRE(count, "nvfp4rtBundleGetNumArguments");
    *count =
        static_cast<int64_t>(bundle->bundle->manifest().arguments().size());
    return NVFP4RT_SUCCESS;
  });
}

int nvfp4rtBundleGetArgument(nvfp4rtBundle bundle, int64_t index, int *kind,
                             const char **type, size_t *bytes) {
  return guarded("nvfp4rtBundleGetArgument", [&]() -> int {
    NVFP4RT_REQUIRE(bundle, "nvfp4rtBundleGetArgument");
    const std::vector<ArgumentSpec> &args =
        bundle->bundle->manifest().arguments();
    if (index < 0 || index >= int64_t(args.size()))
      return invalid("nvfp4rtBundleGetArgument: no argument " +
                     std::to_string(index) + " (there are " +
                     std::to_string(args.size()) + ")");
    const ArgumentSpec &a = args[index];
    if (kind)
      *kind = a.kind == ArgumentSpec::Array    ? NVFP4RT_ARGUMENT_ARRAY
              : a.kind == ArgumentSpec::Scalar ? NVFP4RT_ARGUMENT_SCALAR
                                               : NVFP4RT_ARGUMENT_UNUSED;
    if (type)
      *type = a.kind == ArgumentSpec::Unused ? nullptr : scalarTypeName(a.type);
    if (bytes)
      *bytes = a.kind == ArgumentSpec::Array ? a.bytes : 0;
    return NVFP4RT_SUCCESS;
  });
}

int nvfp4rtBundleGetNumResults(nvfp4rtBundle bundle, int64_t *count) {
  return guarded("nvfp4rtBundleGetNumResults", [&]() -> int {
    NVFP4RT_REQUIRE(bundle, "nvfp4rtBundleGetNumResults");
    NVFP4RT_REQUIRE(count, "nvfp4rtBundleGetNumResults");
    *count = static_cast<int64_t>(bundle->bundle->manifest().results().size());
    return NVFP4RT_SUCCESS;
  });
}

int nvfp4rtBundleGetResult(nvfp4rtBundle bundle, int64_t index,
                           const char **elementType, int64_t *elements,
                           size_t *bytes) {
  return guarded("nvfp4rtBundleGetResult", [&]() -> int {
    NVFP4RT_REQUIRE(bundle, "nvfp4rtBundleGetResult");
    const Manifest &m = bundle->bundle->manifest();
    if (index < 0 || index >= int64_t(m.results().size()) ||
        m.results()[index] < 0)
      return invalid("nvfp4rtBundleGetResult: result " + std::to_string(index) +
                     " is not a device buffer");
    const BufferSpec &b = m.buffers()[m.results()[index]];
    if (elementType)
      *elementType = scalarTypeName(b.elementType);
    if (elements)
      *elements = b.elements;
    if (bytes)
      *bytes = b.bytes();
    return NVFP4RT_SUCCESS;
  });
}

int nvfp4rtBundleGetNumKernels(nvfp4rtBundle bundle, int64_t *count) {
  return guarded("nvfp4rtBundleGetNumKernels", [&]() -> int {
    NVFP4RT_REQUIRE(bundle, "nvfp4rtBundleGetNumKernels");
    NVFP4RT_REQUIRE(count, "nvfp4rtBundleGetNumKernels");
    *count = static_cast<int64_t>(bundle->bundle->manifest().kernels().size());
    return NVFP4RT_SUCCESS;
  });
}

int nvfp4rtBundleGetKernelName(nvfp4rtBundle bundle, int64_t index,
                               const char **name) {
  return guarded("nvfp4rtBundleGetKernelName", [&]() -> int {
    NVFP4RT_REQUIRE(bundle, "nvfp4rtBundleGetKernelName");
    NVFP4RT_REQUIRE(name, "nvfp4rtBundleGetKernelName");
    const std::vector<KernelSpec> &kernels =
        bundle->bundle->manifest().kernels();
    if (index < 0 || index >= int64_t(kernels.size()))
      return invalid("nvfp4rtBundleGetKernelName: no launch " +
                     std::to_string(index));
    *name = kernels[index].name.c_str();
    return NVFP4RT_SUCCESS;
  });
}

int nvfp4rtSessionCreate(nvfp4rtBundle bundle, nvfp4rtSession *session) {
  return guarded("nvfp4rtSessionCreate", [&]() -> int {
    NVFP4RT_REQUIRE(bundle, "nvfp4rtSessionCreate");
    NVFP4RT_REQUIRE(session, "nvfp4rtSessionCreate");
    *session = nullptr;
    Expected<std::unique_ptr<Session>> created =
        bundle->bundle->createSession();
    if (!created.ok())
      return report(created.status());
    *session = new nvfp4rtSession_{created.take()};
    return NVFP4RT_SUCCESS;
  });
}

void nvfp4rtSessionDestroy(nvfp4rtSession session) { delete session; }

int nvfp4rtSessionSetInput(nvfp4rtSession session, int64_t argument,
                           const void *data, size_t bytes) {
  return guarded("nvfp4rtSessionSetInput", [&]() -> int {
    NVFP4RT_REQUIRE(session, "nvfp4rtSessionSetInput");
    return report(session->session->setInput(argument, data, bytes));
  });
}

int nvfp4rtSessionSetScalarInt(nvfp4rtSession session, int64_t argument,
                               int64_t value) {
  return guarded("nvfp4rtSessionSetScalarInt", [&]() -> int {
    NVFP4RT_REQUIRE(session, "nvfp4rtSessionSetScalarInt");
    return report(
        session->session->setScalar(argument, ScalarValue::ofInt(value)));
  });
}

int nvfp4rtSessionSetScalarFloat(nvfp4rtSession session, int64_t argument,
                                 double value) {
  return guarded("nvfp4rtSessionSetScalarFloat", [&]() -> int {
    NVFP4RT_REQUIRE(session, "nvfp4rtSessionSetScalarFloat");
    return report(
        session->session->setScalar(argument, ScalarValue::ofFloat(value)));
  });
}

int nvfp4rtSessionRun(nvfp4rtSession session, int repeat, int warmup,
                      float *milliseconds) {
  return guarded("nvfp4rtSessionRun", [&]() -> int {
    NVFP4RT_REQUIRE(session, "nvfp4rtSessionRun");
    Expected<RunStats> stats = session->session->run(repeat, warmup);
    if (!stats.ok())
      return report(stats.status());
    if (milliseconds)
      for (size_t i = 0; i < stats->milliseconds.size(); ++i)
        milliseconds[i] = stats->milliseconds[i];
    return NVFP4RT_SUCCESS;
  });
}

int nvfp4rtSessionGetResult(nvfp4rtSession session, int64_t result, void *data,
                            size_t bytes) {
  return guarded("nvfp4rtSessionGetResult", [&]() -> int {
    NVFP4RT_REQUIRE(session, "nvfp4rtSessionGetResult");
    return report(session->session->getResult(result, data, bytes));
  });
}

int nvfp4rtLauncherCreate(nvfp4rtBundle bundle, nvfp4rtLauncher *launcher) {
  return guarded("nvfp4rtLauncherCreate", [&]() -> int {
    NVFP4RT_REQUIRE(bundle, "nvfp4rtLauncherCreate");
    NVFP4RT_REQUIRE(launcher, "nvfp4rtLauncherCreate");
    *launcher = nullptr;
    Expected<std::unique_ptr<Launcher>> created =
        Launcher::create(bundle->bundle);
    if (!created.ok())
      return report(created.status());
    *launcher = new nvfp4rtLauncher_{created.take()};
    return NVFP4RT_SUCCESS;
  });
}

void nvfp4rtLauncherDestroy(nvfp4rtLauncher launcher) { delete launcher; }

int nvfp4rtLauncherGetWorkspaceBytes(nvfp4rtLauncher launcher, size_t *bytes) {
  return guarded("nvfp4rtLauncherGetWorkspaceBytes", [&]() -> int {
    NVFP4RT_REQUIRE(launcher, "nvfp4rtLauncherGetWorkspaceBytes");
    NVFP4RT_REQUIRE(bytes, "nvfp4rtLauncherGetWorkspaceBytes");
    *bytes = launcher->launcher->workspaceBytes();
    return NVFP4RT_SUCCESS;
  });
}

int nvfp4rtLauncherGetWorkspaceOffset(nvfp4rtLauncher launcher, int64_t buffer,
                                      int64_t *offset) {
  return guarded("nvfp4rtLauncherGetWorkspaceOffset", [&]() -> int {
    NVFP4RT_REQUIRE(launcher, "nvfp4rtLauncherGetWorkspaceOffset");
    NVFP4RT_REQUIRE(offset, "nvfp4rtLauncherGetWorkspaceOffset");
    const Manifest &m = launcher->launcher->manifest();
    if (buffer < 0 || buffer >= int64_t(m.buffers().size()))
      return invalid("nvfp4rtLauncherGetWorkspaceOffset: buffer " +
                     std::to_string(buffer) + " does not exist (there are " +
                     std::to_string(m.buffers().size()) + ")");
    std::optional<size_t> at = launcher->launcher->workspaceOffset(buffer);
    *offset = at ? static_cast<int64_t>(*at) : -1;
    return NVFP4RT_SUCCESS;
  });
}

int nvfp4rtLauncherSetAllocator(nvfp4rtLauncher launcher,
                                nvfp4rtAllocateFunction allocate,
                                nvfp4rtDeallocateFunction deallocate,
                                void *userData) {
  return guarded("nvfp4rtLauncherSetAllocator", [&]() -> int {
    NVFP4RT_REQUIRE(launcher, "nvfp4rtLauncherSetAllocator");
    if (!allocate != !deallocate)
      return invalid("nvfp4rtLauncherSetAllocator: give both functions, or "
                     "neither (the launcher's pool)");
    launcher->launcher->setAllocator(
        allocate ? std::make_shared<CAllocator>(allocate, deallocate, userData)
                 : nullptr);
    return NVFP4RT_SUCCESS;
  });
}

int nvfp4rtLauncherSetPoison(nvfp4rtLauncher launcher, int poison) {
  return guarded("nvfp4rtLauncherSetPoison", [&]() -> int {
    NVFP4RT_REQUIRE(launcher, "nvfp4rtLauncherSetPoison");
    launcher->launcher->setPoison(poison != 0);
    return NVFP4RT_SUCCESS;
  });
}

int nvfp4rtLauncherSetTensorMapCacheCapacity(nvfp4rtLauncher launcher,
                                             size_t sets) {
  return guarded("nvfp4rtLauncherSetTensorMapCacheCapacity", [&]() -> int {
    NVFP4RT_REQUIRE(launcher, "nvfp4rtLauncherSetTensorMapCacheCapacity");
    if (!sets)
      return invalid("nvfp4rtLauncherSetTensorMapCacheCapacity: the cache "
                     "must hold at least one set");
    launcher->launcher->setTensorMapCacheCapacity(sets);
    return NVFP4RT_SUCCESS;
  });
}

int nvfp4rtLauncherSetScalarInt(nvfp4rtLauncher launcher, int64_t argument,
                                int64_t value) {
  return guarded("nvfp4rtLauncherSetScalarInt", [&]() -> int {
    NVFP4RT_REQUIRE(launcher, "nvfp4rtLauncherSetScalarInt");
    return report(
        launcher->launcher->setScalar(argument, ScalarValue::ofInt(value)));
  });
}

int nvfp4rtLauncherSetScalarFloat(nvfp4rtLauncher launcher, int64_t argument,
                                  double value) {
  return guarded("nvfp4rtLauncherSetScalarFloat", [&]() -> int {
    NVFP4RT_REQUIRE(launcher, "nvfp4rtLauncherSetScalarFloat");
    return report(
        launcher->launcher->setScalar(argument, ScalarValue::ofFloat(value)));
  });
}

int nvfp4rtLauncherLaunch(nvfp4rtLauncher launcher, void *stream,
                          const uint64_t *arguments, int64_t numArguments,
                          const uint64_t *results, int64_t numResults,
                          uint64_t workspace) {
  return guarded("nvfp4rtLauncherLaunch", [&]() -> int {
    NVFP4RT_REQUIRE(launcher, "nvfp4rtLauncherLaunch");
    if (numArguments < 0 || numResults < 0)
      return invalid("nvfp4rtLauncherLaunch: negative count");
    return report(launcher->launcher->launch(
        static_cast<CUstream_st *>(stream), arguments,
        static_cast<size_t>(numArguments), results,
        static_cast<size_t>(numResults), workspace));
  });
}

int nvfp4rtLauncherLaunchKernels(nvfp4rtLauncher launcher, void *stream,
                                 const uint64_t *arguments,
                                 int64_t numArguments, const uint64_t *results,
                                 int64_t numResults, uint64_t workspace,
                                 const int64_t *kernels, int64_t numKernels,
                                 int initialize) {
  return guarded("nvfp4rtLauncherLaunchKernels", [&]() -> int {
    NVFP4RT_REQUIRE(launcher, "nvfp4rtLauncherLaunchKernels");
    if (numArguments < 0 || numResults < 0 || numKernels < 0)
      return invalid("nvfp4rtLauncherLaunchKernels: negative count");
    return report(launcher->launcher->launchKernels(
        static_cast<CUstream_st *>(stream), arguments,
        static_cast<size_t>(numArguments), results,
        static_cast<size_t>(numResults), workspace, kernels,
        static_cast<size_t>(numKernels), initialize != 0));
  });
}

int nvfp4rtLauncherGetTensorMapCacheStats(nvfp4rtLauncher launcher,
                                          size_t *hits, size_t *misses,
                                          size_t *evictions, size_t *entries) {
  return guarded("nvfp4rtLauncherGetTensorMapCacheStats", [&]() -> int {
    NVFP4RT_REQUIRE(launcher, "nvfp4rtLauncherGetTensorMapCacheStats");
    Launcher::TensorMapCacheStats stats =
        launcher->launcher->tensorMapCacheStats();
    if (hits)
      *hits = stats.hits;
    if (misses)
      *misses = stats.misses;
    if (evictions)
      *evictions = stats.evictions;
    if (entries)
      *entries = stats.entries;
    return NVFP4RT_SUCCESS;
  });
}

} // extern "C"
