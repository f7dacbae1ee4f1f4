//===- Runtime.h - Load and run nvfp4 kernel bundles ------------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// A small launcher, over the CUDA driver API, for the kernels nvfp4-compile
// writes. A *bundle* is two files:
//
//   nvfp4-compile X.mlir --chip=sm_90a --emit=cubin -o k.cubin --report=k.json
//
// the kernel image (cubin, or PTX with --emit=ptx) and the JSON manifest
// (--report): the device buffers the host function uses and where their
// contents come from, and every kernel launch in order with its grid, block,
// dynamic shared memory and parameters. This library runs the host function
// without MLIR:
//
//   using namespace nvfp4::runtime;
//   auto bundle = Bundle::load("k.cubin", "k.json", /*device=*/0);
//   if (!bundle) { puts(bundle.message().c_str()); return 1; }
//   auto session = (*bundle)->createSession();              // device buffers
//   (*session)->setInput(0, x.data(), x.size() * 2);        // argument 0
//   (*session)->setScalar(1, 42);                           // argument 1
//   auto stats = (*session)->run();                         // all launches
//   (*session)->getResult(0, codes.data(), codes.size());   // result 0
//
// Semantics (the same as integration_test/run_cases.py):
//  - a buffer with "argument": N holds host-function argument N (uploaded
//    as raw bytes by setInput);
//  - every other buffer starts as 0xAB bytes ("poison") or, with
//    "zero_initialized", as zeros; with "fill_from_argument": N every
//    element is then set to scalar argument N (its bits; see Manifest.cpp),
//    with "fill_bits": B (32-bit elements only) every element to the bits B
//    (a constant fill, e.g. a static amax);
//  - kernels are launched in manifest order; a pointer parameter gets its
//    buffer, a scalar parameter its host argument or its constant "value",
//    a "tensormap" parameter the device address of a CUtensorMap over its
//    buffer (encoded with cuTensorMapEncodeTiled when the session is
//    created);
//  - a buffer with "result": N is the host function's result N.
// Internal buffers are re-initialized before every repetition of run(), so
// each repetition computes the same thing; argument buffers are uploaded
// once (the generated kernels never write them).
//
// Errors are values (Status / Expected), never exceptions or aborts; a CUDA
// error carries cuGetErrorName / cuGetErrorString and what was being done.
// The CUDA driver (libcuda.so.1) is loaded when a Device is first opened,
// so programs using this library start on machines without one and report
// ErrorCode::NoDevice.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_RUNTIME_RUNTIME_H
#define NVFP4_RUNTIME_RUNTIME_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

// cuda.h's stream handle type (CUstream is `CUstream_st *`), so that this
// header does not need cuda.h.
struct CUstream_st;

namespace nvfp4::runtime {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// What kind of failure a Status reports. The values are the C API's status
/// codes (nvfp4-c/Runtime.h); keep them in sync.
enum class ErrorCode : int {
  Success = 0,
  InvalidArgument = 1, ///< a caller mistake: bad index, wrong size, null
  Io = 2,              ///< a file could not be read or written
  InvalidManifest = 3, ///< the manifest is not JSON or not a valid manifest
  NoDevice = 4,        ///< no CUDA driver, no device, or the wrong device
  Cuda = 5,            ///< a CUDA driver call failed
  OutOfMemory = 6,     ///< host or device memory exhausted
};

/// The name of an ErrorCode ("invalid argument", ...).
const char *errorCodeName(ErrorCode code);

/// Success, or a failure with a code and a one-line message meant to be shown
/// to the user as is.
class Status {
public:
  static Status success() { return Status(); }
  static Status error(ErrorCode code, std::string message) {
    Status result;
    result.code_ =
        code == ErrorCode::Success ? ErrorCode::InvalidArgument : code;
    result.message_ = std::move(message);
    return result;
  }

  bool ok() const { return code_ == ErrorCode::Success; }
  ErrorCode code() const { return code_; }
  const std::string &message() const { return message_; }

private:
  Status() = default;
  ErrorCode code_ = ErrorCode::Success;
  std::string message_;
};

/// A value of type T or a failed Status. Check ok() before dereferencing.
template <typename T> class Expected {
public:
  Expected(T value) : value_(std::move(value)), status_(Status::success()) {}
  Expected(Status error) : status_(std::move(error)) {
    if (status_.ok())
      status_ = Status::error(ErrorCode::InvalidArgument,
                              "internal error: Expected built without a value");
  }

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status &status() const { return status_; }
  const std::string &message() const { return status_.message(); }

  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }
  T take() { return std::move(*value_); }

private:
  std::optional<T> value_;
  Status status_;
};

//===----------------------------------------------------------------------===//
// Manifest (no CUDA needed)
//===----------------------------------------------------------------------===//

/// Element and scalar types the manifest may name ("bf16", "i64", ...).
enum class ScalarType {
  I1,
  I8,
  I16,
  I32,
  I64,
  Index,
  F16,
  BF16,
  F32,
  F64,
  F8E4M3FN,
  F8E5M2
};

/// Parses an MLIR type name; nullopt if it is not one of ScalarType.
std::optional<ScalarType> parseScalarType(std::string_view name);
/// The MLIR spelling of `type`.
const char *scalarTypeName(ScalarType type);
/// Bytes one element of `type` occupies in a device buffer.
size_t scalarTypeSize(ScalarType type);
bool isFloatType(ScalarType type);

/// A scalar value as the host gives it: an integer or a floating-point
/// number. It is converted to the parameter's type at launch.
struct ScalarValue {
  bool isFloat = false;
  int64_t intValue = 0;
  double floatValue = 0;

  static ScalarValue ofInt(int64_t v) { return {false, v, 0}; }
  static ScalarValue ofFloat(double v) { return {true, 0, v}; }
};

/// Parses the text of a value of `type`: for integer types decimal or 0x
/// hex (64-bit types also take unsigned values up to 2^64-1, as two's
/// complement), for floating-point types anything strtod reads.
Expected<ScalarValue> parseScalarValue(ScalarType type, std::string_view text);

/// One device buffer of the host function.
struct BufferSpec {
  ScalarType elementType = ScalarType::I8;
  int64_t elements = 0;
  int64_t argument = -1;         ///< holds host-function argument N
  int64_t result = -1;           ///< is host-function result N
  bool zeroInitialized = false;  ///< starts as zeros (else 0xAB poison)
  int64_t fillFromArgument = -1; ///< every element set to scalar argument N
  /// Every (32-bit) element set to these bits (a constant fill); never
  /// with argument, zeroInitialized or fillFromArgument.
  std::optional<uint32_t> fillBits;
  /// Size in bytes (elements * element size).
  size_t bytes() const {
    return static_cast<size_t>(elements) * scalarTypeSize(elementType);
  }
};

/// Swizzle, L2 promotion and out-of-bounds fill of a TMA tensor map, as the
/// manifest spells them ("128B", "256B", "zero"). The values are those of
/// cuda.h's CUtensorMapSwizzle, CUtensorMapL2promotion and
/// CUtensorMapFloatOOBfill (checked where cuda.h is included).
enum class TensorMapSwizzle { None = 0, B32 = 1, B64 = 2, B128 = 3 };
enum class TensorMapL2Promotion { None = 0, B64 = 1, B128 = 2, B256 = 3 };
enum class TensorMapOobFill { Zero = 0, NanRequestZeroFma = 1 };

const char *tensorMapSwizzleName(TensorMapSwizzle swizzle);
const char *tensorMapL2PromotionName(TensorMapL2Promotion promotion);
const char *tensorMapOobFillName(TensorMapOobFill fill);

/// A {"type": "tensormap"} kernel parameter: a CUtensorMap (TMA
/// descriptor) over buffer `buffer`, viewed as a dense row-major array of
/// shape `dims` (outermost first, as in MLIR) of `elementType`, copied in
/// boxes of shape `box`. The kernel receives the device address of the
/// 128-byte descriptor, which a session encodes once when it is created.
struct TensorMapSpec {
  ScalarType elementType = ScalarType::I8;
  int64_t buffer = -1;
  std::vector<int64_t> dims; ///< outermost first
  std::vector<int64_t> box;  ///< outermost first, same rank as dims
  TensorMapSwizzle swizzle = TensorMapSwizzle::None;
  TensorMapL2Promotion l2Promotion = TensorMapL2Promotion::None;
  TensorMapOobFill oobFill = TensorMapOobFill::Zero;
};

/// The arguments of cuTensorMapEncodeTiled for a TensorMapSpec (all but the
/// descriptor and the global address), innermost dimension first as the
/// driver wants them. Enumerations hold cuda.h's values.
struct TensorMapEncoding {
  static constexpr unsigned kMaxRank = 5;
  int dataType = 0; ///< CUtensorMapDataType
  uint32_t rank = 0;
  uint64_t globalDim[kMaxRank] = {};
  uint64_t globalStrides[kMaxRank - 1] = {}; ///< bytes; rank - 1 entries
  uint32_t boxDim[kMaxRank] = {};
  uint32_t elementStrides[kMaxRank] = {};
  int interleave = 0;  ///< CU_TENSOR_MAP_INTERLEAVE_NONE
  int swizzle = 0;     ///< CUtensorMapSwizzle
  int l2Promotion = 0; ///< CUtensorMapL2promotion
  int oobFill = 0;     ///< CUtensorMapFloatOOBfill
};

/// Computes the cuTensorMapEncodeTiled arguments of `spec` and checks the
/// driver's documented rules (rank 1..5, dims <= 2^32, strides multiples of
/// 16 bytes below 2^40, box sizes 1..256 with an inner box of a multiple of
/// 16 bytes that fits the swizzle span, NaN fill only for float types).
/// Errors are InvalidManifest with a message that names the field.
Expected<TensorMapEncoding> computeTensorMapEncoding(const TensorMapSpec &spec);

/// Bytes the tensor of `encoding` spans in global memory: one element plus
/// (dim - 1) strides of every dimension (CuTe's cosize x element size).
uint64_t tensorMapSpanBytes(const TensorMapEncoding &encoding);

/// CUTLASS's workaround for small tensors on older drivers (NVIDIA/cutlass
/// include/cute/atom/copy_traits_sm90_tma.hpp, make_tma_copy_desc, commit
/// 7107b055): after cuTensorMapEncodeTiled, if the driver version
/// (cuDriverGetVersion) is 13010 or lower and the tensor spans fewer than
/// 131072 bytes, bit 21 of the descriptor's second 64-bit word is cleared.
/// CUTLASS gives no reason and the CUtensorMap layout is not documented;
/// the runtime does what NVIDIA's own kernels do. `tensorMap` is the 128
/// bytes the driver wrote; returns whether the bit was cleared. A version
/// of 0 (unknown: the driver has no cuDriverGetVersion) leaves it alone.
bool applySmallTensorMapWorkaround(void *tensorMap,
                                   const TensorMapEncoding &encoding,
                                   int driverVersion);

/// One kernel parameter: a device buffer, a tensor map over one, or a
/// scalar.
struct ParamSpec {
  enum Kind { Scalar, Pointer, TensorMap } kind = Scalar;
  ScalarType type = ScalarType::I64; ///< pointee type for pointers
  int64_t buffer = -1;               ///< pointers and tensor maps
  int64_t argument = -1;             ///< scalars from a host argument
  /// Scalars from a host argument through nvfp4-apply-recipe's stream-seed
  /// mixing: the value is deriveStreamSeed(argument, *seedStream).
  std::optional<uint64_t> seedStream;
  std::optional<ScalarValue> value;  ///< constant scalars
  std::optional<TensorMapSpec> tensorMap; ///< tensor maps

  bool isPointer() const { return kind == Pointer; }
  bool isTensorMap() const { return kind == TensorMap; }
  bool isScalar() const { return kind == Scalar; }
};

/// One launch.
struct KernelSpec {
  std::string name;
  std::string op; ///< the nvfp4 op it implements ("nvfp4.quantize")
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t sharedMemoryBytes = 0;
  std::vector<ParamSpec> params;
};

/// What a host-function argument is to the kernels.
struct ArgumentSpec {
  enum Kind { Unused, Array, Scalar } kind = Unused;
  int64_t buffer = -1;               ///< Array: the buffer it fills
  ScalarType type = ScalarType::I64; ///< Array: element; Scalar: type
  size_t bytes = 0;                  ///< Array: bytes setInput expects
};

/// One op of the host function that no kernel implements (the manifest's
/// "host_computation"): the bundle's kernels alone do not compute the
/// function's results.
struct HostComputation {
  std::string op;       ///< "linalg.transpose"
  std::string location; ///< "model.mlir:12:5"
};

/// The stream seed nvfp4-apply-recipe derives for its `streamIndex`-th
/// stochastic-rounding quantization from a base seed (SplitMix64's output
/// `streamIndex` + 1); "seed_stream" parameters get it at launch.
uint64_t deriveStreamSeed(uint64_t seed, uint64_t streamIndex);

/// Limits on what the runtime reads (untrusted files): a manifest larger
/// than kMaxManifestBytes or nested deeper than kMaxManifestDepth, or a
/// kernel image larger than kMaxImageBytes, is rejected before parsing.
constexpr size_t kMaxManifestBytes = size_t(64) << 20;
constexpr unsigned kMaxManifestDepth = 64;
constexpr size_t kMaxImageBytes = size_t(1) << 31;

/// A parsed and checked manifest: every index refers to something that
/// exists, every type is known, every launch has a static geometry.
class Manifest {
public:
  /// Parses the JSON text of a manifest; `origin` (a file name) prefixes
  /// error messages.
  static Expected<Manifest> parse(std::string_view json,
                                  std::string_view origin = "manifest");
  /// Reads and parses a manifest file.
  static Expected<Manifest> load(const std::string &path);

  const std::string &function() const { return function_; }
  const std::string &chip() const { return chip_; }
  const std::vector<BufferSpec> &buffers() const { return buffers_; }
  const std::vector<KernelSpec> &kernels() const { return kernels_; }

  /// Host-function arguments the kernels use, indexed by argument number
  /// (arguments the kernels do not use are Unused).
  const std::vector<ArgumentSpec> &arguments() const { return arguments_; }
  /// For each host-function result index, the buffer holding it (-1 when
  /// that result is not a device buffer).
  const std::vector<int64_t> &results() const { return results_; }

  /// Host-function ops the kernels do not cover ("host_computation"; empty
  /// when the kernels compute everything).
  const std::vector<HostComputation> &hostComputation() const {
    return hostComputation_;
  }
  /// Success, or the InvalidManifest error that refuses to run a bundle
  /// whose manifest lists host computation (Bundle::load and nvfp4-run
  /// call it).
  Status checkRunnable() const;

  /// A readable summary (function, arguments, results, launches).
  std::string describe() const;

private:
  std::string function_, chip_, origin_;
  std::vector<HostComputation> hostComputation_;
  std::vector<BufferSpec> buffers_;
  std::vector<KernelSpec> kernels_;
  std::vector<ArgumentSpec> arguments_;
  std::vector<int64_t> results_;
};

/// What a kernel image file holds, from its first bytes.
enum class ImageKind { Cubin, Fatbin, PTX, Unknown };
ImageKind detectImageKind(std::string_view image);
const char *imageKindName(ImageKind kind);

//===----------------------------------------------------------------------===//
// Device, bundle, session
//===----------------------------------------------------------------------===//

class DeviceImpl;
class BundleImpl;
class SessionImpl;

/// A CUDA device and its primary context.
class Device {
public:
  /// Loads the CUDA driver (libcuda.so.1, or $NVFP4_CUDA_DRIVER), calls
  /// cuInit and retains device `ordinal`'s primary context. Fails with
  /// ErrorCode::NoDevice when there is no driver or no such device.
  static Expected<std::shared_ptr<Device>> open(int ordinal = 0);

  const std::string &name() const;
  int ordinal() const;
  /// Compute capability, e.g. {9, 0} for an H100/H200.
  std::pair<int, int> computeCapability() const;
  /// The driver's CUDA version, e.g. 13000.
  int driverVersion() const;

  ~Device();
  explicit Device(std::unique_ptr<DeviceImpl> impl);
  DeviceImpl &impl() { return *impl_; }

private:
  std::unique_ptr<DeviceImpl> impl_;
};

class Session;

/// A loaded kernel image (CUmodule) with its manifest, on one device.
class Bundle : public std::enable_shared_from_this<Bundle> {
public:
  /// Reads the kernel image (cubin, fatbin or PTX) and the manifest, checks
  /// that the image's chip fits the device, loads the module and looks up
  /// every kernel (setting the dynamic shared memory limit of kernels that
  /// need more than 48 KiB).
  static Expected<std::shared_ptr<Bundle>>
  load(std::shared_ptr<Device> device, const std::string &imagePath,
       const std::string &manifestPath);
  /// Reads and checks both files first (their errors need no GPU), then
  /// opens device `ordinal` and loads the image.
  static Expected<std::shared_ptr<Bundle>> load(const std::string &imagePath,
                                                const std::string &manifestPath,
                                                int ordinal = 0);
  /// The same from memory.
  static Expected<std::shared_ptr<Bundle>>
  loadFromMemory(std::shared_ptr<Device> device, std::string image,
                 Manifest manifest);

  const Manifest &manifest() const;
  Device &device() const;

  /// Allocates the manifest's device buffers and encodes its tensor maps
  /// (one 128-byte device descriptor per "tensormap" parameter).
  Expected<std::unique_ptr<Session>> createSession();

  ~Bundle();
  explicit Bundle(std::unique_ptr<BundleImpl> impl);
  BundleImpl &impl() { return *impl_; }

private:
  std::unique_ptr<BundleImpl> impl_;
};

/// Timing of run(): one entry per repetition, in milliseconds, measured
/// with CUDA events around the whole launch sequence.
struct RunStats {
  std::vector<float> milliseconds;
  /// With run(..., timeLaunches = true): for each repetition, the time of
  /// each launch in manifest order (from the event recorded before it to
  /// the one recorded after it); empty otherwise.
  std::vector<std::vector<float>> launchMilliseconds;
  float min() const;
  float median() const;
  float mean() const;
  /// Median and minimum over the repetitions of launch `launch`'s time (0
  /// without launch timing).
  float launchMedian(size_t launch) const;
  float launchMin(size_t launch) const;
};

/// The device buffers of one bundle and the arguments given so far. Not
/// thread-safe; use one session per thread.
class Session {
public:
  /// Uploads host array argument `argument`; `bytes` must be its exact size
  /// (Manifest::arguments()[argument].bytes).
  Status setInput(int64_t argument, const void *data, size_t bytes);
  /// Sets scalar argument `argument` (converted to its type at launch).
  Status setScalar(int64_t argument, ScalarValue value);
  /// Any integer (an unsigned 64-bit value is passed as its two's
  /// complement) or floating-point number.
  template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
  Status setScalar(int64_t argument, T value) {
    return setScalar(argument, ScalarValue::ofInt(static_cast<int64_t>(value)));
  }
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Status setScalar(int64_t argument, T value) {
    return setScalar(argument,
                     ScalarValue::ofFloat(static_cast<double>(value)));
  }

  /// Initializes the internal buffers and launches every kernel in order,
  /// `repeat` times (after `warmup` untimed runs), then synchronizes. With
  /// `timeLaunches` an event is also recorded between consecutive launches,
  /// which times each one (RunStats::launchMilliseconds) and adds the
  /// events' own small cost to the sequence's time.
  Expected<RunStats> run(int repeat = 1, int warmup = 0,
                         bool timeLaunches = false);

  /// Size in bytes of host-function result `result`.
  Expected<size_t> resultBytes(int64_t result) const;
  /// Downloads result `result`; `bytes` must be resultBytes(result).
  Status getResult(int64_t result, void *data, size_t bytes);
  /// The device address of buffer `buffer` (for interoperation).
  Expected<uint64_t> bufferAddress(int64_t buffer) const;

  const Manifest &manifest() const;

  ~Session();
  explicit Session(std::unique_ptr<SessionImpl> impl);

private:
  std::unique_ptr<SessionImpl> impl_;
};

//===----------------------------------------------------------------------===//
// Launching on the caller's memory and stream
//===----------------------------------------------------------------------===//

/// Device memory for the scratch buffers of a launch, from the caller's
/// allocator (PyTorch's caching allocator, say). Both calls are stream
/// ordered: memory deallocated after the launch's kernels were enqueued on
/// `stream` may be reused by later work on that stream.
class DeviceAllocator {
public:
  virtual ~DeviceAllocator();
  /// `bytes` (> 0) bytes, 256-byte aligned, usable by work on `stream`.
  virtual Expected<uint64_t> allocate(size_t bytes, CUstream_st *stream) = 0;
  virtual void deallocate(uint64_t address, size_t bytes,
                          CUstream_st *stream) = 0;
};

class LauncherImpl;

/// Enqueues a bundle's kernels on a stream the caller owns, over device
/// memory the caller owns (PyTorch tensors): array arguments and results
/// are the caller's device pointers, the other buffers ("scratch": quantized
/// operands, amaxes) live in one workspace. Nothing is copied to or from
/// the host and nothing waits for the GPU:
///
///   auto launcher = Launcher::create(bundle);
///   size_t bytes = (*launcher)->workspaceBytes();       // caller allocates
///   (*launcher)->setScalar(4, seed);                    // scalar argument 4
///   uint64_t args[] = {x, w, 0, 0, 0}, results[] = {y};
///   (*launcher)->launch(stream, args, 5, results, 1, workspace);
///
/// Per launch, on `stream` and in manifest order: scratch and result
/// buffers that start as zeros or with a fill get a memset, then every
/// kernel is launched. The workspace comes from, in this order: the
/// `workspace` address given, the DeviceAllocator set (allocated before
/// and deallocated after the launch, stream ordered), or a pool the
/// launcher allocates once and keeps (launches through one launcher then
/// run one after the other: a launch on another stream first waits, on the
/// GPU, for the previous one).
///
/// Tensor maps are encoded per set of buffer addresses and cached (in
/// device memory, uploaded on the stream of the first launch that uses
/// them); with a caching allocator the addresses repeat, so after the first
/// steps a launch encodes nothing. The cache holds `tensorMapCacheCapacity`
/// sets; evicting one waits for its last launch to finish.
///
/// Every caller address must be 16-byte aligned and cover the argument's or
/// result's bytes (Manifest::arguments(), resultBytes); the memory must be
/// on the bundle's device, in its primary context (PyTorch's). A launcher
/// is not thread-safe.
class Launcher {
public:
  static Expected<std::unique_ptr<Launcher>>
  create(std::shared_ptr<Bundle> bundle);

  const Manifest &manifest() const;
  /// Bytes of the workspace (0 when every buffer is an argument or result).
  size_t workspaceBytes() const;
  /// The byte offset of buffer `buffer` in the workspace; nullopt for a
  /// buffer that is an argument or a result (the caller's memory).
  std::optional<size_t> workspaceOffset(int64_t buffer) const;

  /// Where the workspace comes from when launch() is given none (null: the
  /// launcher's own pool).
  void setAllocator(std::shared_ptr<DeviceAllocator> allocator);
  /// Write 0xAB into scratch and result buffers that have no other initial
  /// contents before each launch (as Session does: a kernel that forgets an
  /// element shows up). Off by default.
  void setPoison(bool poison);
  /// The most pointer sets whose tensor maps stay cached (default 64).
  void setTensorMapCacheCapacity(size_t sets);

  /// Sets scalar argument `argument` for the following launches.
  Status setScalar(int64_t argument, ScalarValue value);
  template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
  Status setScalar(int64_t argument, T value) {
    return setScalar(argument, ScalarValue::ofInt(static_cast<int64_t>(value)));
  }
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Status setScalar(int64_t argument, T value) {
    return setScalar(argument,
                     ScalarValue::ofFloat(static_cast<double>(value)));
  }

  /// Enqueues the bundle on `stream` (null: the context's default stream).
  /// `arguments[i]` is the device address of array argument i (entries of
  /// scalar and unused arguments are ignored; there must be one per
  /// manifest argument), `results[r]` that of result r (one per manifest
  /// result; 0 for a result that is not a device buffer), `workspace` the
  /// workspace's address or 0. Returns once the work is enqueued.
  Status launch(CUstream_st *stream, const uint64_t *arguments,
                size_t numArguments, const uint64_t *results,
                size_t numResults, uint64_t workspace = 0);

  /// A part of the launch: the kernels `kernels` (manifest indices, in the
  /// order given, each at most once), with scratch and result buffers
  /// initialized first only when `initialize` is set. A launch split into
  /// parts (nvfp4.torch reduces the amaxes of sharded operands across
  /// ranks between the amax kernels and the quantizations that read them)
  /// needs the caller's `workspace`, the same for every part, and the
  /// caller orders the parts so that each kernel comes after the kernels
  /// whose buffers it reads. With every kernel in manifest order and
  /// `initialize` this is launch().
  Status launchKernels(CUstream_st *stream, const uint64_t *arguments,
                       size_t numArguments, const uint64_t *results,
                       size_t numResults, uint64_t workspace,
                       const int64_t *kernels, size_t numKernels,
                       bool initialize);

  /// Cache statistics since creation (tests, tuning).
  struct TensorMapCacheStats {
    size_t hits = 0, misses = 0, evictions = 0, entries = 0;
  };
  TensorMapCacheStats tensorMapCacheStats() const;

  ~Launcher();
  explicit Launcher(std::unique_ptr<LauncherImpl> impl);

private:
  std::unique_ptr<LauncherImpl> impl_;
};

} // namespace nvfp4::runtime

#endif // NVFP4_RUNTIME_RUNTIME_H
