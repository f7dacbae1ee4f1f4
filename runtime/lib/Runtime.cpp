//===- Runtime.cpp - Load and run nvfp4 kernel bundles --------------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "RuntimeImpl.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <new>

using namespace nvfp4::runtime;
using namespace nvfp4::runtime::detail;

// Runtime.h mirrors these cuda.h enumerations without including cuda.h;
// computeTensorMapEncoding (Manifest.cpp) uses the data type values.
static_assert(int(TensorMapSwizzle::None) == CU_TENSOR_MAP_SWIZZLE_NONE &&
              int(TensorMapSwizzle::B32) == CU_TENSOR_MAP_SWIZZLE_32B &&
              int(TensorMapSwizzle::B64) == CU_TENSOR_MAP_SWIZZLE_64B &&
              int(TensorMapSwizzle::B128) == CU_TENSOR_MAP_SWIZZLE_128B);
static_assert(
    int(TensorMapL2Promotion::None) == CU_TENSOR_MAP_L2_PROMOTION_NONE &&
    int(TensorMapL2Promotion::B64) == CU_TENSOR_MAP_L2_PROMOTION_L2_64B &&
    int(TensorMapL2Promotion::B128) == CU_TENSOR_MAP_L2_PROMOTION_L2_128B &&
    int(TensorMapL2Promotion::B256) == CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
static_assert(
    int(TensorMapOobFill::Zero) == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE &&
    int(TensorMapOobFill::NanRequestZeroFma) ==
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
static_assert(CU_TENSOR_MAP_DATA_TYPE_UINT8 == 0 &&
              CU_TENSOR_MAP_DATA_TYPE_UINT16 == 1 &&
              CU_TENSOR_MAP_DATA_TYPE_INT32 == 3 &&
              CU_TENSOR_MAP_DATA_TYPE_INT64 == 5 &&
              CU_TENSOR_MAP_DATA_TYPE_FLOAT16 == 6 &&
              CU_TENSOR_MAP_DATA_TYPE_FLOAT32 == 7 &&
              CU_TENSOR_MAP_DATA_TYPE_FLOAT64 == 8 &&
              CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 == 9);
static_assert(sizeof(CUtensorMap) == 128 && TensorMapEncoding::kMaxRank == 5);

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

const char *nvfp4::runtime::errorCodeName(ErrorCode code) {
  switch (code) {
  case ErrorCode::Success:
    return "success";
  case ErrorCode::InvalidArgument:
    return "invalid argument";
  case ErrorCode::Io:
    return "I/O error";
  case ErrorCode::InvalidManifest:
    return "invalid manifest";
  case ErrorCode::NoDevice:
    return "no CUDA device";
  case ErrorCode::Cuda:
    return "CUDA error";
  case ErrorCode::OutOfMemory:
    return "out of memory";
  }
  return "unknown error";
}

ImageKind nvfp4::runtime::detectImageKind(std::string_view image) {
  if (image.size() >= 4 && std::memcmp(image.data(),
                                       "\x7f"
                                       "ELF",
                                       4) == 0)
    return ImageKind::Cubin;
  if (image.size() >= 4 &&
      std::memcmp(image.data(), "\x50\xed\x55\xba", 4) == 0)
    return ImageKind::Fatbin;
  std::string_view head = image.substr(0, 64 * 1024);
  if (head.find('\0') == std::string_view::npos &&
      head.find(".version") != std::string_view::npos &&
      head.find(".target") != std::string_view::npos)
    return ImageKind::PTX;
  return ImageKind::Unknown;
}

const char *nvfp4::runtime::imageKindName(ImageKind kind) {
  switch (kind) {
  case ImageKind::Cubin:
    return "cubin";
  case ImageKind::Fatbin:
    return "fatbin";
  case ImageKind::PTX:
    return "PTX";
  case ImageKind::Unknown:
    return "unknown";
  }
  return "unknown";
}

float RunStats::min() const {
  return milliseconds.empty()
             ? 0.0f
             : *std::min_element(milliseconds.begin(), milliseconds.end());
}


/// The median of `values` (0 if there are none).
static float medianOf(std::vector<float> values) {
  if (values.empty())
    return 0.0f;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5f * (values[n / 2 - 1] + values[n / 2]);
}

/// Launch `launch`'s time in every repetition that timed its launches.
static std::vector<float> launchTimes(const RunStats &stats, size_t launch) {
  std::vector<float> times;
  for (const std::vector<float> &run : stats.launchMilliseconds)
    if (launch < run.size())
      times.push_back(run[launch]);
  return times;
}

float RunStats::launchMedian(size_t launch) const {
  return medianOf(launchTimes(*this, launch));
}

float RunStats::launchMin(size_t launch) const {
  std::vector<float> times = launchTimes(*this, launch);
  return times.empty() ? 0.0f : *std::min_element(times.begin(), times.end());
}

float RunStats::median() const { return medianOf(milliseconds); }

float RunStats::mean() const {
  if (milliseconds.empty())
    return 0.0f;
  double sum = 0;
  for (float t : milliseconds)
    sum += t;
  return static_cast<float>(sum / milliseconds.size());
}

/// Parses "sm_90a" / "sm_100f" / "sm_120" into major, minor and the suffix
/// (0, 'a' or 'f').
static bool parseChip(const std::string &chip, int &major, int &minor,
                      char &suffix) {
  if (chip.rfind("sm_", 0) != 0)
    return false;
  size_t i = 3;
  int number = 0;
  while (i < chip.size() && chip[i] >= '0' && chip[i] <= '9' && number < 10000)
    number = number * 10 + (chip[i++] - '0');
  if (i == 3 || number < 10)
    return false;
  std::string rest = chip.substr(i);
  if (!rest.empty() && rest != "a" && rest != "f")
    return false;
  major = number / 10;
  minor = number % 10;
  suffix = rest.empty() ? 0 : rest[0];
  return true;
}

//===----------------------------------------------------------------------===//
// Device
//===----------------------------------------------------------------------===//


Device::Device(std::unique_ptr<DeviceImpl> impl) : impl_(std::move(impl)) {}
Device::~Device() = default;
const std::string &Device::name() const { return impl_->name; }
int Device::ordinal() const { return impl_->ordinal; }
std::pair<int, int> Device::computeCapability() const {
  return {impl_->major, impl_->minor};
}
int Device::driverVersion() const { return impl_->driverVersion; }

Expected<std::shared_ptr<Device>> Device::open(int ordinal) {
  Expected<const CudaDriver *> loaded = getDriver();
  if (!loaded.ok())
    return loaded.status();
  const CudaDriver &driver = **loaded;

  int count = 0;
  CUresult r = driver.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS)
    return cudaError(driver, r, "no CUDA device: cuDeviceGetCount",
                     ErrorCode::NoDevice);
  if (count == 0)
    return Status::error(ErrorCode::NoDevice,
                         "no CUDA device: the driver reports no GPU");
  if (ordinal < 0 || ordinal >= count)
    return Status::error(ErrorCode::NoDevice,
                         llvm::formatv("no CUDA device {0} (the driver "
                                       "reports {1} GPU{2})",
                                       ordinal, count, count == 1 ? "" : "s")
                             .str());

  auto impl = std::make_unique<DeviceImpl>();
  impl->driver = &driver;
  impl->ordinal = ordinal;
  std::string where = "querying device " + std::to_string(ordinal);
  if ((r = driver.cuDeviceGet(&impl->device, ordinal)) != CUDA_SUCCESS)
    return impl->cuda(r, where);
  char name[256] = {};
  if ((r = driver.cuDeviceGetName(name, sizeof(name) - 1, impl->device)) !=
      CUDA_SUCCESS)
    return impl->cuda(r, where);
  impl->name = name;
  struct {
    CUdevice_attribute attribute;
    int *value;
  } attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &impl->major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &impl->minor},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &impl->maxSharedOptin},
  };
  for (auto &a : attributes)
    if ((r = driver.cuDeviceGetAttribute(a.value, a.attribute, impl->device)) !=
        CUDA_SUCCESS)
      return impl->cuda(r, where);
  if ((r = driver.cuDriverGetVersion(&impl->driverVersion)) != CUDA_SUCCESS)
    return impl->cuda(r, where);
  CUcontext context = nullptr;
  if ((r = driver.cuDevicePrimaryCtxRetain(&context, impl->device)) !=
      CUDA_SUCCESS)
    return impl->cuda(r, "creating a context on " + impl->label());
  impl->context = context;
  return std::make_shared<Device>(std::move(impl));
}

//===----------------------------------------------------------------------===//
// Bundle
//===----------------------------------------------------------------------===//


Bundle::Bundle(std::unique_ptr<BundleImpl> impl) : impl_(std::move(impl)) {}
Bundle::~Bundle() = default;
const Manifest &Bundle::manifest() const { return impl_->manifest; }
Device &Bundle::device() const { return *impl_->device; }

/// Replaces line breaks so that a multi-line log fits a one-line message.
static std::string oneLine(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' ||
                           text.back() == ' ' || text.back() == '\0'))
    text.pop_back();
  for (char &c : text)
    if (c == '\n' || c == '\r')
      c = ';';
  return text;
}

Expected<std::shared_ptr<Bundle>>
Bundle::loadFromMemory(std::shared_ptr<Device> device, std::string image,
                       Manifest manifest) {
  if (!device)
    return Status::error(ErrorCode::InvalidArgument, "no device given");
  // A bundle whose host function computes something on the host that no
  // kernel does cannot be replayed from its manifest.
  if (Status runnable = manifest.checkRunnable(); !runnable.ok())
    return runnable;
  DeviceImpl &dev = device->impl();
  const CudaDriver &driver = *dev.driver;

  ImageKind kind = detectImageKind(image);
  if (kind == ImageKind::Unknown)
    return Status::error(ErrorCode::InvalidArgument,
                         "the kernel image is not a cubin, fatbin or PTX");

  // A cubin (and PTX using sm_XXa features) runs only on its own
  // architecture; say so before the driver answers NO_BINARY_FOR_GPU.
  int major = 0, minor = 0;
  char suffix = 0;
  if (kind != ImageKind::Fatbin &&
      parseChip(manifest.chip(), major, minor, suffix)) {
    bool fits;
    if (suffix == 'a') // arch-specific: that chip only
      fits = dev.major == major && dev.minor == minor;
    else if (suffix == 'f' || kind == ImageKind::Cubin) // same family
      fits = dev.major == major && dev.minor >= minor;
    else // plain PTX: JIT-compiled for any newer chip
      fits = dev.major * 10 + dev.minor >= major * 10 + minor;
    if (!fits)
      return Status::error(
          ErrorCode::NoDevice,
          llvm::formatv("the bundle is compiled for {0}, but {1} is sm_{2}{3}",
                        manifest.chip(), dev.label(), dev.major, dev.minor)
              .str());
  }

  if (Status s = dev.makeCurrent(); !s.ok())
    return s;
  auto impl = std::make_unique<BundleImpl>();
  impl->device = device;

  // PTX is JIT-compiled by the driver; keep its error log for the message.
  char log[4096] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log) - 1)};
  CUresult r = driver.cuModuleLoadDataEx(&impl->module, image.c_str(), 2,
                                         options, values);
  if (r != CUDA_SUCCESS) {
    std::string what = std::string("loading the ") + imageKindName(kind) +
                       " on " + dev.label();
    Status status = cudaError(driver, r, what);
    std::string jitLog = oneLine(log);
    if (!jitLog.empty())
      status = Status::error(status.code(), status.message() + ": " + jitLog);
    impl->module = nullptr;
    return status;
  }

  std::map<std::string, CUfunction> byName;
  std::map<CUfunction, uint32_t> maxShared;
  const std::vector<KernelSpec> &kernels = manifest.kernels();
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KernelSpec &k = kernels[i];
    CUfunction &f = byName[k.name];
    std::string label =
        llvm::formatv("kernel '{0}' (launch {1})", k.name, i).str();
    if (!f && (r = driver.cuModuleGetFunction(&f, impl->module,
                                              k.name.c_str())) != CUDA_SUCCESS)
      return cudaError(driver, r,
                       "looking up " + label + " in the kernel image",
                       ErrorCode::InvalidManifest);
    impl->functions.push_back(f);
    uint32_t &shared = maxShared[f];
    shared = std::max(shared, k.sharedMemoryBytes);

    int maxThreads = 0, staticShared = 0;
    if ((r = driver.cuFuncGetAttribute(&maxThreads,
                                       CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                       f)) != CUDA_SUCCESS ||
        (r = driver.cuFuncGetAttribute(&staticShared,
                                       CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                       f)) != CUDA_SUCCESS)
      return cudaError(driver, r, "querying " + label);
    uint64_t threads = uint64_t(k.block[0]) * k.block[1] * k.block[2];
    if (threads > uint64_t(maxThreads))
      return Status::error(
          ErrorCode::InvalidManifest,
          llvm::formatv("{0}: block {1}x{2}x{3} has {4} threads; the kernel "
                        "allows at most {5} on {6}",
                        label, k.block[0], k.block[1], k.block[2], threads,
                        maxThreads, dev.label())
              .str());
    if (uint64_t(k.sharedMemoryBytes) + uint64_t(staticShared) >
        uint64_t(dev.maxSharedOptin))
      return Status::error(
          ErrorCode::InvalidManifest,
          llvm::formatv("{0} needs {1} bytes of dynamic (+ {2} static) "
                        "shared memory; {3} allows {4} per block",
                        label, k.sharedMemoryBytes, staticShared, dev.label(),
                        dev.maxSharedOptin)
              .str());
  }
  // Above 48 KiB of static + dynamic shared memory a kernel must opt in to
  // its dynamic bytes; asking whenever it has any covers a small dynamic
  // part beside a large static one (a launch of 20 KiB dynamic beside 36
  // KiB static failed without it on the H200).
  for (auto [f, bytes] : maxShared) {
    if (bytes == 0)
      continue;
    if ((r = driver.cuFuncSetAttribute(
             f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
             static_cast<int>(bytes))) != CUDA_SUCCESS) {
      std::string name;
      for (auto &[n, fn] : byName)
        if (fn == f)
          name = n;
      return cudaError(driver, r,
                       llvm::formatv("allowing kernel '{0}' {1} bytes of "
                                     "dynamic shared memory",
                                     name, bytes)
                           .str());
    }
  }

  impl->manifest = std::move(manifest);
  return std::make_shared<Bundle>(std::move(impl));
}

static Expected<std::string> readFile(const std::string &path,
                                      const char *what) {
  // A regular file of bounded size: a device or FIFO would be read until
  // memory runs out.
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return Status::error(ErrorCode::Io, std::string("cannot read ") + what +
                                            " '" + path + "': " + ec.message());
  if (!llvm::sys::fs::is_regular_file(status))
    return Status::error(ErrorCode::Io, std::string("cannot read ") + what +
                                            " '" + path +
                                            "': not a regular file");
  if (status.getSize() > kMaxImageBytes)
    return Status::error(ErrorCode::InvalidArgument,
                         llvm::formatv("{0} '{1}' has {2} bytes, more than "
                                       "the {3} this runtime loads",
                                       what, path, status.getSize(),
                                       kMaxImageBytes)
                             .str());
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file)
    return Status::error(ErrorCode::Io, std::string("cannot read ") + what +
                                            " '" + path +
                                            "': " + file.getError().message());
  return (*file)->getBuffer().str();
}

/// Reads and checks both files of a bundle (no GPU needed).
static Expected<std::pair<std::string, Manifest>>
readBundle(const std::string &imagePath, const std::string &manifestPath) {
  Expected<Manifest> manifest = Manifest::load(manifestPath);
  if (!manifest.ok())
    return manifest.status();
  Expected<std::string> image = readFile(imagePath, "kernel image");
  if (!image.ok())
    return image.status();
  if (detectImageKind(*image) == ImageKind::Unknown)
    return Status::error(ErrorCode::InvalidArgument,
                         "'" + imagePath +
                             "' is not a cubin, fatbin or PTX file");
  return std::make_pair(image.take(), manifest.take());
}

Expected<std::shared_ptr<Bundle>>
Bundle::load(std::shared_ptr<Device> device, const std::string &imagePath,
             const std::string &manifestPath) {
  auto files = readBundle(imagePath, manifestPath);
  if (!files.ok())
    return files.status();
  return loadFromMemory(std::move(device), std::move(files->first),
                        std::move(files->second));
}

Expected<std::shared_ptr<Bundle>> Bundle::load(const std::string &imagePath,
                                               const std::string &manifestPath,
                                               int ordinal) {
  auto files = readBundle(imagePath, manifestPath);
  if (!files.ok())
    return files.status();
  Expected<std::shared_ptr<Device>> device = Device::open(ordinal);
  if (!device.ok())
    return device.status();
  return loadFromMemory(device.take(), std::move(files->first),
                        std::move(files->second));
}

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

namespace nvfp4::runtime {

class SessionImpl {
public:
  std::shared_ptr<Bundle> bundle;
  CUstream stream = nullptr;
  CUevent start = nullptr, stop = nullptr;
  /// With launch timing: one event before each launch and one after the
  /// last (created by the first run that times its launches).
  std::vector<CUevent> launchEvents;
  std::vector<CUdeviceptr> buffers;
  /// One allocation holding every tensor map (128 bytes each), and for each
  /// launch and parameter the device address of its map (0 if none).
  CUdeviceptr tensorMapBlock = 0;
  std::vector<std::vector<CUdeviceptr>> tensorMaps;
  std::vector<bool> inputSet;
  std::vector<std::optional<ScalarValue>> scalars;

  const Manifest &manifest() const { return bundle->manifest(); }
  DeviceImpl &dev() const { return bundle->impl().dev(); }
  const CudaDriver &driver() const { return *dev().driver; }
  Status cuda(CUresult r, const std::string &what) const {
    return cudaError(driver(), r, what);
  }

  Status checkArgument(int64_t argument, ArgumentSpec::Kind kind,
                       const char *call) const {
    const std::vector<ArgumentSpec> &args = manifest().arguments();
    if (argument < 0 || argument >= int64_t(args.size()) ||
        args[argument].kind == ArgumentSpec::Unused)
      return Status::error(
          ErrorCode::InvalidArgument,
          llvm::formatv("{0}: the kernels use no argument {1} of @{2}", call,
                        argument, manifest().function())
              .str());
    if (args[argument].kind != kind)
      return Status::error(
          ErrorCode::InvalidArgument,
          llvm::formatv("{0}: argument {1} is {2}", call, argument,
                        args[argument].kind == ArgumentSpec::Array
                            ? "an array (use setInput)"
                            : "a scalar (use setScalar)")
              .str());
    return Status::success();
  }

  /// Zero, poison and fill the buffers that do not hold arguments.
  Status initializeBuffers(const std::vector<std::optional<uint64_t>> &fill) {
    const std::vector<BufferSpec> &specs = manifest().buffers();
    CUresult r;
    for (size_t i = 0; i < specs.size(); ++i) {
      const BufferSpec &b = specs[i];
      size_t bytes = b.bytes();
      // A constant fill covers every byte: no poison needed first.
      if (b.argument < 0 && !b.fillBits && bytes &&
          (r = driver().cuMemsetD8Async(buffers[i],
                                        b.zeroInitialized ? 0x00 : 0xAB, bytes,
                                        stream)) != CUDA_SUCCESS)
        return cuda(r, llvm::formatv("initializing buffer {0}", i).str());
      if (!fill[i] || !b.elements)
        continue;
      uint64_t value = *fill[i];
      size_t n = static_cast<size_t>(b.elements);
      std::string what =
          b.fillBits
              ? llvm::formatv("filling buffer {0} with {1:x8}", i, *b.fillBits)
                    .str()
              : llvm::formatv("filling buffer {0} with argument {1}", i,
                              b.fillFromArgument)
                    .str();
      switch (scalarTypeSize(b.elementType)) {
      case 1:
        r = driver().cuMemsetD8Async(buffers[i], uint8_t(value), n, stream);
        break;
      case 2:
        r = driver().cuMemsetD16Async(buffers[i], uint16_t(value), n, stream);
        break;
      case 4:
        r = driver().cuMemsetD32Async(buffers[i], uint32_t(value), n, stream);
        break;
      default: {
        // No 64-bit memset: upload the pattern (synchronously, so the host
        // copy may go away).
        std::unique_ptr<uint64_t[]> pattern(new (std::nothrow) uint64_t[n]);
        if (!pattern)
          return Status::error(ErrorCode::OutOfMemory, what);
        std::fill(pattern.get(), pattern.get() + n, value);
        r = driver().cuMemcpyHtoDAsync(buffers[i], pattern.get(), n * 8,
                                       stream);
        if (r == CUDA_SUCCESS)
          r = driver().cuStreamSynchronize(stream);
        break;
      }
      }
      if (r != CUDA_SUCCESS)
        return cuda(r, what);
    }
    return Status::success();
  }

  /// Encodes the tensor map of every "tensormap" parameter over its
  /// (allocated) buffer and uploads them; buffer addresses never change
  /// afterwards, so this is done once per session.
  Status encodeTensorMaps() {
    const std::vector<KernelSpec> &kernels = manifest().kernels();
    size_t count = 0;
    tensorMaps.assign(kernels.size(), {});
    for (size_t k = 0; k < kernels.size(); ++k) {
      tensorMaps[k].assign(kernels[k].params.size(), 0);
      for (const ParamSpec &p : kernels[k].params)
        count += p.isTensorMap();
    }
    if (!count)
      return Status::success();
    const CudaDriver &d = driver();
    if (!d.cuTensorMapEncodeTiled)
      return Status::error(
          ErrorCode::NoDevice,
          "the bundle's kernels take TMA tensor maps, but the CUDA driver " +
              d.path + " has no cuTensorMapEncodeTiled (CUDA 12.0 or newer "
                       "needs it)");
    std::vector<CUtensorMap> host(count); // 128-byte aligned (alignas)
    size_t next = 0;
    std::vector<std::pair<size_t, size_t>> where; // (launch, param)
    for (size_t k = 0; k < kernels.size(); ++k) {
      for (size_t j = 0; j < kernels[k].params.size(); ++j) {
        const ParamSpec &p = kernels[k].params[j];
        if (!p.isTensorMap())
          continue;
        const TensorMapSpec &tm = *p.tensorMap;
        std::string what =
            llvm::formatv("encoding the tensor map of kernel '{0}' (launch "
                          "{1}) parameter {2} ({3})",
                          kernels[k].name, k, j, describeTensorMap(tm))
                .str();
        Expected<TensorMapEncoding> e = computeTensorMapEncoding(tm);
        if (!e.ok())
          return Status::error(ErrorCode::InvalidManifest,
                               what + ": " + e.message());
        CUresult r = d.cuTensorMapEncodeTiled(
            &host[next], static_cast<CUtensorMapDataType>(e->dataType),
            e->rank, reinterpret_cast<void *>(buffers[tm.buffer]),
            e->globalDim, e->globalStrides, e->boxDim, e->elementStrides,
            static_cast<CUtensorMapInterleave>(e->interleave),
            static_cast<CUtensorMapSwizzle>(e->swizzle),
            static_cast<CUtensorMapL2promotion>(e->l2Promotion),
            static_cast<CUtensorMapFloatOOBfill>(e->oobFill));
        if (r != CUDA_SUCCESS)
          return cuda(r, what);
        applySmallTensorMapWorkaround(&host[next], *e, driverVersion(d));
        where.emplace_back(k, j);
        ++next;
      }
    }
    size_t bytes = count * sizeof(CUtensorMap);
    CUresult r;
    if ((r = d.cuMemAlloc(&tensorMapBlock, bytes)) != CUDA_SUCCESS)
      return cuda(r, llvm::formatv("allocating {0} tensor maps ({1} bytes) on "
                                   "{2}",
                                   count, bytes, dev().label())
                         .str());
    if ((r = d.cuMemcpyHtoD(tensorMapBlock, host.data(), bytes)) !=
        CUDA_SUCCESS)
      return cuda(r, llvm::formatv("uploading {0} tensor maps", count).str());
    for (size_t i = 0; i < where.size(); ++i)
      tensorMaps[where[i].first][where[i].second] =
          tensorMapBlock + i * sizeof(CUtensorMap);
    return Status::success();
  }

  ~SessionImpl() {
    if (!bundle || !dev().makeCurrent().ok())
      return;
    if (stream)
      driver().cuStreamSynchronize(stream);
    for (CUdeviceptr p : buffers)
      if (p)
        driver().cuMemFree(p);
    if (tensorMapBlock)
      driver().cuMemFree(tensorMapBlock);
    if (start)
      driver().cuEventDestroy(start);
    if (stop)
      driver().cuEventDestroy(stop);
    for (CUevent e : launchEvents)
      if (e)
        driver().cuEventDestroy(e);
    if (stream)
      driver().cuStreamDestroy(stream);
  }
};

} // namespace nvfp4::runtime

Session::Session(std::unique_ptr<SessionImpl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;
const Manifest &Session::manifest() const { return impl_->manifest(); }

Expected<std::unique_ptr<Session>> Bundle::createSession() {
  DeviceImpl &dev = impl_->dev();
  if (Status s = dev.makeCurrent(); !s.ok())
    return s;
  auto impl = std::make_unique<SessionImpl>();
  // The session keeps the bundle (and so the module and device) alive.
  impl->bundle = weak_from_this().lock();
  if (!impl->bundle)
    return Status::error(ErrorCode::InvalidArgument,
                         "createSession: the bundle is not owned by the "
                         "shared_ptr Bundle::load returned");
  const CudaDriver &driver = *dev.driver;
  CUresult r;
  if ((r = driver.cuStreamCreate(&impl->stream, CU_STREAM_NON_BLOCKING)) !=
      CUDA_SUCCESS)
    return impl->cuda(r, "creating a stream on " + dev.label());
  if ((r = driver.cuEventCreate(&impl->start, CU_EVENT_DEFAULT)) !=
          CUDA_SUCCESS ||
      (r = driver.cuEventCreate(&impl->stop, CU_EVENT_DEFAULT)) != CUDA_SUCCESS)
    return impl->cuda(r, "creating timing events on " + dev.label());
  const std::vector<BufferSpec> &specs = manifest().buffers();
  impl->buffers.assign(specs.size(), 0);
  for (size_t i = 0; i < specs.size(); ++i) {
    size_t bytes = std::max<size_t>(specs[i].bytes(), 1);
    if ((r = driver.cuMemAlloc(&impl->buffers[i], bytes)) != CUDA_SUCCESS)
      return impl->cuda(r, llvm::formatv("allocating buffer {0} ({1} x {2}, "
                                         "{3} bytes) on {4}",
                                         i, specs[i].elements,
                                         scalarTypeName(specs[i].elementType),
                                         specs[i].bytes(), dev.label())
                               .str());
  }
  if (Status st = impl->encodeTensorMaps(); !st.ok())
    return st;
  impl->inputSet.assign(manifest().arguments().size(), false);
  impl->scalars.assign(manifest().arguments().size(), std::nullopt);
  return std::make_unique<Session>(std::move(impl));
}

Status Session::setInput(int64_t argument, const void *data, size_t bytes) {
  SessionImpl &s = *impl_;
  if (Status st = s.checkArgument(argument, ArgumentSpec::Array, "setInput");
      !st.ok())
    return st;
  const ArgumentSpec &arg = s.manifest().arguments()[argument];
  const BufferSpec &buffer = s.manifest().buffers()[arg.buffer];
  if (bytes != arg.bytes)
    return Status::error(
        ErrorCode::InvalidArgument,
        llvm::formatv("argument {0}: {1} bytes given, the kernels expect {2} "
                      "({3} x {4})",
                      argument, bytes, arg.bytes, buffer.elements,
                      scalarTypeName(buffer.elementType))
            .str());
  if (bytes && !data)
    return Status::error(
        ErrorCode::InvalidArgument,
        llvm::formatv("argument {0}: no data", argument).str());
  if (Status st = s.dev().makeCurrent(); !st.ok())
    return st;
  CUresult r;
  if (bytes &&
      ((r = s.driver().cuMemcpyHtoDAsync(s.buffers[arg.buffer], data, bytes,
                                         s.stream)) != CUDA_SUCCESS ||
       (r = s.driver().cuStreamSynchronize(s.stream)) != CUDA_SUCCESS))
    return s.cuda(
        r, llvm::formatv("uploading argument {0} ({1} bytes)", argument, bytes)
               .str());
  s.inputSet[argument] = true;
  return Status::success();
}

Status Session::setScalar(int64_t argument, ScalarValue value) {
  SessionImpl &s = *impl_;
  if (Status st = s.checkArgument(argument, ArgumentSpec::Scalar, "setScalar");
      !st.ok())
    return st;
  ScalarType type = s.manifest().arguments()[argument].type;
  Expected<uint64_t> bits = encodeScalar(type, value);
  if (!bits.ok())
    return Status::error(
        ErrorCode::InvalidArgument,
        llvm::formatv("argument {0}: {1}", argument, bits.message()).str());
  s.scalars[argument] = value;
  return Status::success();
}

Expected<RunStats> Session::run(int repeat, int warmup, bool timeLaunches) {
  SessionImpl &s = *impl_;
  const Manifest &m = s.manifest();
  if (repeat < 1 || warmup < 0)
    return Status::error(
        ErrorCode::InvalidArgument,
        "run: repeat must be at least 1 and warmup at least 0");
  for (size_t a = 0; a < m.arguments().size(); ++a) {
    const ArgumentSpec &arg = m.arguments()[a];
    if (arg.kind == ArgumentSpec::Array && !s.inputSet[a])
      return Status::error(
          ErrorCode::InvalidArgument,
          llvm::formatv("argument {0} ({1} x {2}) was not given", a,
                        m.buffers()[arg.buffer].elements,
                        scalarTypeName(arg.type))
              .str());
    if (arg.kind == ArgumentSpec::Scalar && !s.scalars[a])
      return Status::error(ErrorCode::InvalidArgument,
                           llvm::formatv("argument {0} ({1} scalar) was not "
                                         "given",
                                         a, scalarTypeName(arg.type))
                               .str());
  }

  // Parameter values: one 8-byte slot per parameter (little endian, so a
  // pointer to the slot is a pointer to a narrower scalar too).
  const std::vector<KernelSpec> &kernels = m.kernels();
  std::vector<std::vector<uint64_t>> slots(kernels.size());
  std::vector<std::vector<void *>> pointers(kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k) {
    const std::vector<ParamSpec> &params = kernels[k].params;
    slots[k].resize(params.size());
    for (size_t j = 0; j < params.size(); ++j) {
      const ParamSpec &p = params[j];
      if (p.isPointer()) {
        slots[k][j] = static_cast<uint64_t>(s.buffers[p.buffer]);
        continue;
      }
      if (p.isTensorMap()) {
        slots[k][j] = static_cast<uint64_t>(s.tensorMaps[k][j]);
        continue;
      }
      Expected<uint64_t> bits = scalarParamBits(
          p, p.argument >= 0 ? &*s.scalars[p.argument] : nullptr);
      if (!bits.ok())
        return Status::error(ErrorCode::InvalidArgument,
                             llvm::formatv("kernel '{0}' parameter {1}: {2}",
                                           kernels[k].name, j, bits.message())
                                 .str());
      slots[k][j] = *bits;
    }
    for (uint64_t &slot : slots[k])
      pointers[k].push_back(&slot);
  }
  std::vector<std::optional<uint64_t>> fill(m.buffers().size());
  for (size_t i = 0; i < m.buffers().size(); ++i) {
    const BufferSpec &b = m.buffers()[i];
    Expected<std::optional<uint64_t>> bits = bufferFillBits(
        m, b, b.fillFromArgument >= 0 ? &*s.scalars[b.fillFromArgument]
                                      : nullptr);
    if (!bits.ok())
      return bits.status();
    fill[i] = *bits;
  }

  if (Status st = s.dev().makeCurrent(); !st.ok())
    return st;
  const CudaDriver &driver = s.driver();
  if (timeLaunches && s.launchEvents.size() != kernels.size() + 1) {
    s.launchEvents.resize(kernels.size() + 1, nullptr);
    for (CUevent &e : s.launchEvents) {
      CUresult r;
      if (!e && (r = driver.cuEventCreate(&e, CU_EVENT_DEFAULT)) !=
                    CUDA_SUCCESS) {
        e = nullptr;
        return s.cuda(r, "creating the per-launch timing events");
      }
    }
  }
  RunStats stats;
  for (int iteration = 0; iteration < warmup + repeat; ++iteration) {
    if (Status st = s.initializeBuffers(fill); !st.ok())
      return st;
    CUresult r;
    if ((r = driver.cuEventRecord(s.start, s.stream)) != CUDA_SUCCESS)
      return s.cuda(r, "recording the start event");
    for (size_t k = 0; k < kernels.size(); ++k) {
      const KernelSpec &kernel = kernels[k];
      if (timeLaunches &&
          (r = driver.cuEventRecord(s.launchEvents[k], s.stream)) !=
              CUDA_SUCCESS)
        return s.cuda(r, llvm::formatv("recording the event before launch {0}",
                                       k)
                             .str());
      r = driver.cuLaunchKernel(
          s.bundle->impl().functions[k], kernel.grid[0], kernel.grid[1],
          kernel.grid[2], kernel.block[0], kernel.block[1], kernel.block[2],
          kernel.sharedMemoryBytes, s.stream,
          pointers[k].empty() ? nullptr : pointers[k].data(), nullptr);
      if (r != CUDA_SUCCESS)
        return s.cuda(
            r, llvm::formatv("launching kernel '{0}' (launch {1} of {2}, grid "
                             "{3}x{4}x{5}, block {6}x{7}x{8}, {9} bytes of "
                             "dynamic shared memory)",
                             kernel.name, k, kernels.size(), kernel.grid[0],
                             kernel.grid[1], kernel.grid[2], kernel.block[0],
                             kernel.block[1], kernel.block[2],
                             kernel.sharedMemoryBytes)
                   .str());
    }
    if (timeLaunches &&
        (r = driver.cuEventRecord(s.launchEvents[kernels.size()],
                                  s.stream)) != CUDA_SUCCESS)
      return s.cuda(r, "recording the event after the last launch");
    if ((r = driver.cuEventRecord(s.stop, s.stream)) != CUDA_SUCCESS)
      return s.cuda(r, "recording the stop event");
    if ((r = driver.cuEventSynchronize(s.stop)) != CUDA_SUCCESS)
      return s.cuda(r, llvm::formatv("running the {0} launches of @{1} (a "
                                     "kernel failed; run under "
                                     "compute-sanitizer to see which)",
                                     kernels.size(), m.function())
                           .str());
    float ms = 0;
    if ((r = driver.cuEventElapsedTime(&ms, s.start, s.stop)) != CUDA_SUCCESS)
      return s.cuda(r, "reading the timing events");
    if (iteration < warmup)
      continue;
    stats.milliseconds.push_back(ms);
    if (!timeLaunches)
      continue;
    std::vector<float> &launches = stats.launchMilliseconds.emplace_back();
    for (size_t k = 0; k < kernels.size(); ++k) {
      float t = 0;
      if ((r = driver.cuEventElapsedTime(&t, s.launchEvents[k],
                                         s.launchEvents[k + 1])) !=
          CUDA_SUCCESS)
        return s.cuda(r, llvm::formatv("reading the timing events of launch "
                                       "{0}",
                                       k)
                             .str());
      launches.push_back(t);
    }
  }
  return stats;
}

Expected<size_t> Session::resultBytes(int64_t result) const {
  const Manifest &m = impl_->manifest();
  if (result < 0 || result >= int64_t(m.results().size()) ||
      m.results()[result] < 0)
    return Status::error(
        ErrorCode::InvalidArgument,
        llvm::formatv("result {0} of @{1} is not a device buffer (the "
                      "bundle has {2} result{3})",
                      result, m.function(), m.results().size(),
                      m.results().size() == 1 ? "" : "s")
            .str());
  return m.buffers()[m.results()[result]].bytes();
}

Status Session::getResult(int64_t result, void *data, size_t bytes) {
  SessionImpl &s = *impl_;
  Expected<size_t> expected = resultBytes(result);
  if (!expected.ok())
    return expected.status();
  if (bytes != *expected)
    return Status::error(
        ErrorCode::InvalidArgument,
        llvm::formatv("result {0}: {1} bytes asked for, it has {2}", result,
                      bytes, *expected)
            .str());
  if (bytes && !data)
    return Status::error(
        ErrorCode::InvalidArgument,
        llvm::formatv("result {0}: no destination", result).str());
  if (Status st = s.dev().makeCurrent(); !st.ok())
    return st;
  int64_t buffer = s.manifest().results()[result];
  CUresult r;
  if (bytes && (r = s.driver().cuMemcpyDtoH(data, s.buffers[buffer], bytes)) !=
                   CUDA_SUCCESS)
    return s.cuda(
        r, llvm::formatv("downloading result {0} ({1} bytes)", result, bytes)
               .str());
  return Status::success();
}

Expected<uint64_t> Session::bufferAddress(int64_t buffer) const {
  if (buffer < 0 || buffer >= int64_t(impl_->buffers.size()))
    return Status::error(
        ErrorCode::InvalidArgument,
        llvm::formatv("buffer {0} does not exist", buffer).str());
  return static_cast<uint64_t>(impl_->buffers[buffer]);
}
