//===- Launcher.cpp - Launch a bundle on the caller's memory and stream ---===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The path a framework takes (nvfp4.torch): arguments and results are
// device pointers the caller owns, scratch buffers live in one workspace,
// everything is enqueued on the caller's stream. What a Session does with
// host copies and a synchronization per run is done here with stream-ordered
// memsets and launches only; the single host-to-device copy is the upload
// of a tensor-map set the first time its buffer addresses are seen.
//
//===----------------------------------------------------------------------===//

#include "RuntimeImpl.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstring>
#include <map>

using namespace nvfp4::runtime;
using namespace nvfp4::runtime::detail;

DeviceAllocator::~DeviceAllocator() = default;

namespace {

/// Alignment of each scratch buffer in the workspace (what cuMemAlloc
/// gives, and more than TMA's 16 bytes).
constexpr size_t kWorkspaceAlignment = 256;
/// Caller addresses must be aligned at least this much (TMA's rule for a
/// tensor map's global address; the kernels' vector accesses need no more).
constexpr uint64_t kCallerAlignment = 16;

/// One cached set of tensor maps: the 128-byte descriptors of every
/// "tensormap" parameter for one assignment of buffer addresses, in device
/// memory.
struct TensorMapSet {
  CUdeviceptr block = 0;
  std::vector<CUtensorMap> host; // kept until the upload has run
  CUevent lastUse = nullptr;     // recorded after every launch using it
  CUstream lastStream = nullptr;
  uint64_t lastTick = 0;
};

} // namespace

namespace nvfp4::runtime {

class LauncherImpl {
public:
  std::shared_ptr<Bundle> bundle;
  std::vector<std::optional<size_t>> offsets; // per buffer
  size_t workspaceBytes = 0;
  std::vector<std::optional<ScalarValue>> scalars; // per argument
  std::shared_ptr<DeviceAllocator> allocator;
  bool poison = false;
  size_t capacity = 64;

  // The launcher's own workspace, when the caller gives none.
  CUdeviceptr pool = 0;
  CUevent poolDone = nullptr;
  CUstream poolStream = nullptr;
  bool poolUsed = false;

  // Tensor maps: the (launch, param) of each, its buffer, and the cache.
  std::vector<std::pair<size_t, size_t>> mapParams;
  std::vector<int64_t> mapBuffers;
  std::map<std::vector<uint64_t>, TensorMapSet> cache;
  uint64_t tick = 0;
  Launcher::TensorMapCacheStats stats;

  const Manifest &manifest() const { return bundle->manifest(); }
  DeviceImpl &dev() const { return bundle->impl().dev(); }
  const CudaDriver &driver() const { return *dev().driver; }
  Status cuda(CUresult r, const std::string &what) const {
    return cudaError(driver(), r, what);
  }

  Status initializeBuffers(const std::vector<uint64_t> &addresses,
                           CUstream stream) const;
  Expected<TensorMapSet *> tensorMaps(const std::vector<uint64_t> &addresses,
                                      CUstream stream);
  void release(TensorMapSet &set) const;

  ~LauncherImpl() {
    if (!bundle || !dev().makeCurrent().ok())
      return;
    for (auto &[key, set] : cache)
      release(set);
    if (pool) {
      if (poolDone)
        driver().cuEventSynchronize(poolDone);
      driver().cuMemFree(pool);
    }
    if (poolDone)
      driver().cuEventDestroy(poolDone);
  }
};

} // namespace nvfp4::runtime

Status LauncherImpl::initializeBuffers(const std::vector<uint64_t> &addresses,
                                       CUstream stream) const {
  const Manifest &m = manifest();
  const CudaDriver &d = driver();
  for (auto [i, b] : llvm::enumerate(m.buffers())) {
    size_t bytes = b.bytes();
    if (b.argument >= 0 || !bytes)
      continue;
    CUdeviceptr at = addresses[i];
    CUresult r = CUDA_SUCCESS;
    std::string what = llvm::formatv("initializing buffer {0}", i).str();
    // A constant fill covers every byte; zeros are the manifest's
    // semantics; the 0xAB poison only when asked for.
    if (!b.fillBits && (b.zeroInitialized || poison))
      r = d.cuMemsetD8Async(at, b.zeroInitialized ? 0x00 : 0xAB, bytes, stream);
    if (r != CUDA_SUCCESS)
      return cuda(r, what);
    Expected<std::optional<uint64_t>> fill = bufferFillBits(
        m, b,
        b.fillFromArgument >= 0 ? &*scalars[b.fillFromArgument] : nullptr);
    if (!fill.ok())
      return fill.status();
    if (!*fill || !b.elements)
      continue;
    uint64_t value = **fill;
    size_t n = static_cast<size_t>(b.elements);
    switch (scalarTypeSize(b.elementType)) {
    case 1:
      r = d.cuMemsetD8Async(at, uint8_t(value), n, stream);
      break;
    case 2:
      r = d.cuMemsetD16Async(at, uint16_t(value), n, stream);
      break;
    case 4:
      r = d.cuMemsetD32Async(at, uint32_t(value), n, stream);
      break;
    default:
      // No 64-bit memset: two strided 32-bit ones, the low words (pitch 8
      // bytes, one word per row) and then the high words.
      if (!d.cuMemsetD2D32Async)
        return Status::error(ErrorCode::NoDevice,
                             "the CUDA driver " + d.path +
                                 " has no cuMemsetD2D32Async");
      r = d.cuMemsetD2D32Async(at, 8, uint32_t(value), 1, n, stream);
      if (r == CUDA_SUCCESS)
        r = d.cuMemsetD2D32Async(at + 4, 8, uint32_t(value >> 32), 1, n,
                                 stream);
      break;
    }
    if (r != CUDA_SUCCESS)
      return cuda(r, what);
  }
  return Status::success();
}

void LauncherImpl::release(TensorMapSet &set) const {
  if (set.lastUse) {
    driver().cuEventSynchronize(set.lastUse);
    driver().cuEventDestroy(set.lastUse);
  }
  if (set.block)
    driver().cuMemFree(set.block);
  set = TensorMapSet();
}

Expected<TensorMapSet *>
LauncherImpl::tensorMaps(const std::vector<uint64_t> &addresses,
                         CUstream stream) {
  std::vector<uint64_t> key;
  key.reserve(mapBuffers.size());
  for (int64_t buffer : mapBuffers)
    key.push_back(addresses[buffer]);
  const CudaDriver &d = driver();
  auto found = cache.find(key);
  if (found != cache.end()) {
    ++stats.hits;
    found->second.lastTick = ++tick;
    return &found->second;
  }
  ++stats.misses;
  if (!d.cuTensorMapEncodeTiled)
    return Status::error(
        ErrorCode::NoDevice,
        "the bundle's kernels take TMA tensor maps, but the CUDA driver " +
            d.path + " has no cuTensorMapEncodeTiled (CUDA 12.0 or newer "
                     "needs it)");
  if (!d.cuStreamWaitEvent)
    return Status::error(ErrorCode::NoDevice, "the CUDA driver " + d.path +
                                                  " has no cuStreamWaitEvent");
  // Evict the least recently used set; its last launch must be done first.
  if (cache.size() >= std::max<size_t>(capacity, 1)) {
    auto oldest = std::min_element(cache.begin(), cache.end(),
                                   [](const auto &a, const auto &b) {
                                     return a.second.lastTick <
                                            b.second.lastTick;
                                   });
    release(oldest->second);
    cache.erase(oldest);
    ++stats.evictions;
  }

  TensorMapSet set;
  set.host.resize(mapParams.size());
  const std::vector<KernelSpec> &kernels = manifest().kernels();
  for (size_t i = 0; i < mapParams.size(); ++i) {
    auto [k, j] = mapParams[i];
    const TensorMapSpec &tm = *kernels[k].params[j].tensorMap;
    std::string what =
        llvm::formatv("encoding the tensor map of kernel '{0}' (launch {1}) "
                      "parameter {2} ({3}) at {4:x}",
                      kernels[k].name, k, j, describeTensorMap(tm),
                      addresses[tm.buffer])
            .str();
    Expected<TensorMapEncoding> e = computeTensorMapEncoding(tm);
    if (!e.ok())
      return Status::error(ErrorCode::InvalidManifest,
                           what + ": " + e.message());
    CUresult r = d.cuTensorMapEncodeTiled(
        &set.host[i], static_cast<CUtensorMapDataType>(e->dataType), e->rank,
        reinterpret_cast<void *>(addresses[tm.buffer]), e->globalDim,
        e->globalStrides, e->boxDim, e->elementStrides,
        static_cast<CUtensorMapInterleave>(e->interleave),
        static_cast<CUtensorMapSwizzle>(e->swizzle),
        static_cast<CUtensorMapL2promotion>(e->l2Promotion),
        static_cast<CUtensorMapFloatOOBfill>(e->oobFill));
    if (r != CUDA_SUCCESS)
      return cuda(r, what);
    applySmallTensorMapWorkaround(&set.host[i], *e, driverVersion(d));
  }
  size_t bytes = set.host.size() * sizeof(CUtensorMap);
  CUresult r;
  if ((r = d.cuMemAlloc(&set.block, bytes)) != CUDA_SUCCESS)
    return cuda(r, llvm::formatv("allocating {0} tensor maps ({1} bytes) on "
                                 "{2}",
                                 set.host.size(), bytes, dev().label())
                       .str());
  // The host copy stays in the cache entry, so the asynchronous upload may
  // read it whenever the stream gets there.
  if ((r = d.cuMemcpyHtoDAsync(set.block, set.host.data(), bytes, stream)) !=
          CUDA_SUCCESS ||
      (r = d.cuEventCreate(&set.lastUse, CU_EVENT_DISABLE_TIMING)) !=
          CUDA_SUCCESS) {
    Status status = cuda(r, llvm::formatv("uploading {0} tensor maps",
                                          set.host.size())
                                .str());
    release(set);
    return status;
  }
  set.lastStream = stream;
  set.lastTick = ++tick;
  TensorMapSet &stored = cache[key];
  stored = std::move(set);
  stats.entries = cache.size();
  return &stored;
}

Launcher::Launcher(std::unique_ptr<LauncherImpl> impl)
    : impl_(std::move(impl)) {}
Launcher::~Launcher() = default;

Expected<std::unique_ptr<Launcher>>
Launcher::create(std::shared_ptr<Bundle> bundle) {
  if (!bundle)
    return Status::error(ErrorCode::InvalidArgument, "no bundle given");
  auto impl = std::make_unique<LauncherImpl>();
  impl->bundle = std::move(bundle);
  const Manifest &m = impl->manifest();
  impl->offsets.assign(m.buffers().size(), std::nullopt);
  for (auto [i, b] : llvm::enumerate(m.buffers())) {
    if (b.argument >= 0 || b.result >= 0)
      continue;
    impl->offsets[i] = impl->workspaceBytes;
    size_t bytes = std::max<size_t>(b.bytes(), 1);
    impl->workspaceBytes +=
        (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment *
        kWorkspaceAlignment;
  }
  for (auto [k, kernel] : llvm::enumerate(m.kernels()))
    for (auto [j, p] : llvm::enumerate(kernel.params))
      if (p.isTensorMap()) {
        impl->mapParams.emplace_back(k, j);
        impl->mapBuffers.push_back(p.tensorMap->buffer);
      }
  impl->scalars.assign(m.arguments().size(), std::nullopt);
  return std::make_unique<Launcher>(std::move(impl));
}

const Manifest &Launcher::manifest() const { return impl_->manifest(); }
size_t Launcher::workspaceBytes() const { return impl_->workspaceBytes; }

std::optional<size_t> Launcher::workspaceOffset(int64_t buffer) const {
  if (buffer < 0 || buffer >= int64_t(impl_->offsets.size()))
    return std::nullopt;
  return impl_->offsets[buffer];
}

void Launcher::setAllocator(std::shared_ptr<DeviceAllocator> allocator) {
  impl_->allocator = std::move(allocator);
}
void Launcher::setPoison(bool poison) { impl_->poison = poison; }
void Launcher::setTensorMapCacheCapacity(size_t sets) {
  impl_->capacity = sets;
}
Launcher::TensorMapCacheStats Launcher::tensorMapCacheStats() const {
  TensorMapCacheStats stats = impl_->stats;
  stats.entries = impl_->cache.size();
  return stats;
}

Status Launcher::setScalar(int64_t argument, ScalarValue value) {
  const std::vector<ArgumentSpec> &args = impl_->manifest().arguments();
  if (argument < 0 || argument >= int64_t(args.size()) ||
      args[argument].kind != ArgumentSpec::Scalar)
    return Status::error(
        ErrorCode::InvalidArgument,
        llvm::formatv("setScalar: argument {0} of @{1} is not a scalar the "
                      "kernels use",
                      argument, impl_->manifest().function())
            .str());
  Expected<uint64_t> bits = encodeScalar(args[argument].type, value);
  if (!bits.ok())
    return Status::error(
        ErrorCode::InvalidArgument,
        llvm::formatv("argument {0}: {1}", argument, bits.message()).str());
  impl_->scalars[argument] = value;
  return Status::success();
}

Status Launcher::launch(CUstream_st *stream, const uint64_t *arguments,
                        size_t numArguments, const uint64_t *results,
                        size_t numResults, uint64_t workspace) {
  std::vector<int64_t> all(impl_->manifest().kernels().size());
  for (size_t k = 0; k < all.size(); ++k)
    all[k] = static_cast<int64_t>(k);
  return launchKernels(stream, arguments, numArguments, results, numResults,
                       workspace, all.data(), all.size(), /*initialize=*/true);
}

Status Launcher::launchKernels(CUstream_st *stream, const uint64_t *arguments,
                               size_t numArguments, const uint64_t *results,
                               size_t numResults, uint64_t workspace,
                               const int64_t *kernelIndices, size_t numKernels,
                               bool initialize) {
  LauncherImpl &l = *impl_;
  const Manifest &m = l.manifest();
  auto invalid = [](const std::string &message) {
    return Status::error(ErrorCode::InvalidArgument, "launch: " + message);
  };
  const size_t total = m.kernels().size();
  if (numKernels && !kernelIndices)
    return invalid("no kernel index array given");
  std::vector<bool> listed(total, false);
  for (size_t i = 0; i < numKernels; ++i) {
    int64_t k = kernelIndices[i];
    if (k < 0 || static_cast<size_t>(k) >= total)
      return invalid(llvm::formatv("kernel index {0} out of range (@{1} has "
                                   "{2} kernels)",
                                   k, m.function(), total)
                         .str());
    if (listed[k])
      return invalid(llvm::formatv("kernel {0} listed twice", k).str());
    listed[k] = true;
  }
  // The launcher's pool and an allocator's workspace are per call: a part
  // of a launch would not see the buffers an earlier part wrote.
  if (numKernels != total && l.workspaceBytes && !workspace)
    return invalid("a launch of a subset of the kernels needs the caller's "
                   "workspace (the same for every part)");
  if (numArguments != m.arguments().size())
    return invalid(llvm::formatv("{0} argument addresses given; @{1}'s "
                                 "kernels use {2} arguments",
                                 numArguments, m.function(),
                                 m.arguments().size())
                       .str());
  if (numResults != m.results().size())
    return invalid(llvm::formatv("{0} result addresses given; @{1} has {2} "
                                 "results in device buffers",
                                 numResults, m.function(), m.results().size())
                       .str());
  if ((numArguments && !arguments) || (numResults && !results))
    return invalid("no address array given");

  // The address of every buffer: the caller's for arguments and results,
  // the workspace's for the rest.
  std::vector<uint64_t> addresses(m.buffers().size(), 0);
  auto checkAddress = [&](uint64_t address, const BufferSpec &b,
                          const std::string &what) -> Status {
    if (!b.bytes())
      return Status::success();
    if (!address)
      return invalid(what + " has no device address (it needs " +
                     std::to_string(b.bytes()) + " bytes: " +
                     std::to_string(b.elements) + " x " +
                     scalarTypeName(b.elementType) + ")");
    if (address % kCallerAlignment)
      return invalid(llvm::formatv("{0} at {1:x} is not {2}-byte aligned",
                                   what, address, kCallerAlignment)
                         .str());
    return Status::success();
  };
  for (auto [i, b] : llvm::enumerate(m.buffers())) {
    if (b.argument >= 0) {
      addresses[i] = arguments[b.argument];
      if (Status s = checkAddress(addresses[i], b,
                                  "argument " + std::to_string(b.argument));
          !s.ok())
        return s;
      if (b.result >= 0 && results[b.result] != addresses[i])
        return invalid(llvm::formatv("result {0} is argument {1} itself: "
                                     "give it the same address",
                                     b.result, b.argument)
                           .str());
    } else if (b.result >= 0) {
      addresses[i] = results[b.result];
      if (Status s = checkAddress(addresses[i], b,
                                  "result " + std::to_string(b.result));
          !s.ok())
        return s;
    }
  }
  for (auto [a, arg] : llvm::enumerate(m.arguments()))
    if (arg.kind == ArgumentSpec::Scalar && !l.scalars[a])
      return invalid(llvm::formatv("scalar argument {0} ({1}) was not set",
                                   a, scalarTypeName(arg.type))
                         .str());

  // Parameter values (one 8-byte slot each), before anything is enqueued,
  // so that a bad scalar fails without side effects.
  const std::vector<KernelSpec> &kernels = m.kernels();
  std::vector<std::vector<uint64_t>> slots(kernels.size());
  for (auto [k, kernel] : llvm::enumerate(kernels)) {
    slots[k].resize(kernel.params.size());
    for (auto [j, p] : llvm::enumerate(kernel.params)) {
      if (!p.isScalar())
        continue;
      Expected<uint64_t> bits = scalarParamBits(
          p, p.argument >= 0 ? &*l.scalars[p.argument] : nullptr);
      if (!bits.ok())
        return invalid(llvm::formatv("kernel '{0}' parameter {1}: {2}",
                                     kernel.name, j, bits.message())
                           .str());
      slots[k][j] = *bits;
    }
  }

  if (Status s = l.dev().makeCurrent(); !s.ok())
    return s;
  const CudaDriver &d = l.driver();
  CUstream cuStream = reinterpret_cast<CUstream>(stream);
  CUresult r;

  // The workspace.
  enum { Given, Allocated, Pool, None } source = Given;
  if (!l.workspaceBytes)
    source = None;
  else if (workspace)
    source = Given;
  else if (l.allocator)
    source = Allocated;
  else
    source = Pool;
  if (source == Given && workspace % kWorkspaceAlignment)
    return invalid(llvm::formatv("the workspace at {0:x} is not {1}-byte "
                                 "aligned",
                                 workspace, kWorkspaceAlignment)
                       .str());
  if (source == Allocated) {
    Expected<uint64_t> allocated = l.allocator->allocate(l.workspaceBytes,
                                                         stream);
    if (!allocated.ok())
      return allocated.status();
    workspace = *allocated;
    if (!workspace || workspace % kWorkspaceAlignment) {
      l.allocator->deallocate(workspace, l.workspaceBytes, stream);
      return invalid("the allocator returned an address that is not " +
                     std::to_string(kWorkspaceAlignment) + "-byte aligned");
    }
  }
  if (source == Pool) {
    if (!d.cuStreamWaitEvent)
      return Status::error(ErrorCode::NoDevice,
                           "the CUDA driver " + d.path +
                               " has no cuStreamWaitEvent");
    if (!l.pool) {
      if ((r = d.cuMemAlloc(&l.pool, l.workspaceBytes)) != CUDA_SUCCESS)
        return l.cuda(r, llvm::formatv("allocating the {0}-byte workspace "
                                       "on {1}",
                                       l.workspaceBytes, l.dev().label())
                             .str());
      if ((r = d.cuEventCreate(&l.poolDone, CU_EVENT_DISABLE_TIMING)) !=
          CUDA_SUCCESS)
        return l.cuda(r, "creating the workspace's event");
    }
    // The pool is one buffer: a launch on another stream waits (on the
    // GPU) for the previous launch to be done with it.
    if (l.poolUsed && l.poolStream != cuStream &&
        (r = d.cuStreamWaitEvent(cuStream, l.poolDone, 0)) != CUDA_SUCCESS)
      return l.cuda(r, "ordering the workspace after its previous launch");
    workspace = l.pool;
  }
  // Everything below is enqueued; a failure still hands an allocated
  // workspace back (stream ordered, like a success).
  auto finish = [&](Status status) {
    if (source == Allocated)
      l.allocator->deallocate(workspace, l.workspaceBytes, stream);
    return status;
  };
  for (auto [i, offset] : llvm::enumerate(l.offsets))
    if (offset)
      addresses[i] = workspace + *offset;

  if (initialize)
    if (Status s = l.initializeBuffers(addresses, cuStream); !s.ok())
      return finish(s);

  TensorMapSet *maps = nullptr;
  if (!l.mapParams.empty()) {
    Expected<TensorMapSet *> found = l.tensorMaps(addresses, cuStream);
    if (!found.ok())
      return finish(found.status());
    maps = *found;
    if (maps->lastStream != cuStream &&
        (r = d.cuStreamWaitEvent(cuStream, maps->lastUse, 0)) != CUDA_SUCCESS)
      return finish(l.cuda(r, "ordering the tensor maps' upload"));
    for (size_t i = 0; i < l.mapParams.size(); ++i) {
      auto [k, j] = l.mapParams[i];
      slots[k][j] = maps->block + i * sizeof(CUtensorMap);
    }
  }

  std::vector<void *> pointers;
  for (size_t i = 0; i < numKernels; ++i) {
    size_t k = static_cast<size_t>(kernelIndices[i]);
    const KernelSpec &kernel = kernels[k];
    for (auto [j, p] : llvm::enumerate(kernel.params))
      if (p.isPointer())
        slots[k][j] = addresses[p.buffer];
    pointers.clear();
    for (uint64_t &slot : slots[k])
      pointers.push_back(&slot);
    r = d.cuLaunchKernel(l.bundle->impl().functions[k], kernel.grid[0],
                         kernel.grid[1], kernel.grid[2], kernel.block[0],
                         kernel.block[1], kernel.block[2],
                         kernel.sharedMemoryBytes, cuStream,
                         pointers.empty() ? nullptr : pointers.data(), nullptr);
    if (r != CUDA_SUCCESS)
      return finish(l.cuda(
          r, llvm::formatv("launching kernel '{0}' (launch {1} of {2})",
                           kernel.name, k, kernels.size())
                 .str()));
  }

  if (maps) {
    if ((r = d.cuEventRecord(maps->lastUse, cuStream)) != CUDA_SUCCESS)
      return finish(l.cuda(r, "recording the tensor maps' last use"));
    maps->lastStream = cuStream;
  }
  if (source == Pool) {
    if ((r = d.cuEventRecord(l.poolDone, cuStream)) != CUDA_SUCCESS)
      return finish(l.cuda(r, "recording the workspace's last use"));
    l.poolStream = cuStream;
    l.poolUsed = true;
  }
  return finish(Status::success());
}
