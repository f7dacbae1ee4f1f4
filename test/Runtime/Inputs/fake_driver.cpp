// A stand-in for libcuda.so.1 whose "device memory" is host memory, for
// testing the runtime without a GPU (through $NVFP4_CUDA_DRIVER). Device
// addresses are host addresses, so a test may hand the runtime pointers into
// its own arrays as "device pointers" and read the results back directly.
//
// - Every call that moves or sets memory, launches, waits or encodes a
//   tensor map appends one line to the file $FAKE_DRIVER_LOG (if set), so a
//   test can check what was enqueued and that nothing synchronized.
// - Kernels do nothing, except a kernel whose name ends in "_pN" has N
//   8-byte parameters, which the log line lists, and a kernel named
//   "copy_p3" copies param 2 bytes from the address in param 0 to the one
//   in param 1.
// - Time is a counter of microseconds that each launch advances by its
//   grid's block count; an event records it, so cuEventElapsedTime gives
//   the blocks launched between two events, in microseconds.
// - cuTensorMapEncodeTiled writes the global address into the first 8
//   bytes of the descriptor and the rank into the next 4.
// - $FAKE_DRIVER_FAIL names one entry point that fails with
//   CUDA_ERROR_UNKNOWN (999).
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

namespace {

void log(const char *format, ...) __attribute__((format(printf, 1, 2)));
void log(const char *format, ...) {
  const char *path = std::getenv("FAKE_DRIVER_LOG");
  if (!path || !*path)
    return;
  std::FILE *f = std::fopen(path, "a");
  if (!f)
    return;
  va_list args;
  va_start(args, format);
  std::vfprintf(f, format, args);
  va_end(args);
  std::fputc('\n', f);
  std::fclose(f);
}

unsigned long long fakeClock = 0; // microseconds

bool failing(const char *name) {
  const char *f = std::getenv("FAKE_DRIVER_FAIL");
  return f && std::strcmp(f, name) == 0;
}

} // namespace

#define FAKE_ENTRY(name)                                                       \
  if (failing(#name))                                                          \
    return 999;

extern "C" {

CUresult cuGetErrorName(CUresult e, const char **s) {
  *s = e == 999 ? "CUDA_ERROR_UNKNOWN" : "CUDA_ERROR_FAKE";
  return 0;
}
CUresult cuGetErrorString(CUresult, const char **s) {
  *s = "fake driver error";
  return 0;
}
CUresult cuInit(unsigned) {
  FAKE_ENTRY(cuInit)
  return 0;
}
CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return 0;
}
CUresult cuDeviceGetCount(int *c) {
  *c = 1;
  return 0;
}
CUresult cuDeviceGet(int *d, int o) {
  *d = o;
  return 0;
}
CUresult cuDeviceGetName(char *n, int len, int) {
  std::snprintf(n, len, "Fake GPU");
  return 0;
}
CUresult cuDeviceGetAttribute(int *v, int attribute, int) {
  // 75/76: compute capability 9.0; 97: shared memory per block (opt-in).
  *v = attribute == 75 ? 9 : attribute == 76 ? 0 : attribute == 97 ? 232448 : 0;
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **c, int) {
  *c = reinterpret_cast<void *>(0x1);
  return 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(int) { return 0; }
CUresult cuCtxSetCurrent(void *) { return 0; }
CUresult cuModuleLoadDataEx(void **m, const void *, unsigned, void *, void **) {
  FAKE_ENTRY(cuModuleLoadDataEx)
  *m = reinterpret_cast<void *>(0x2);
  return 0;
}
CUresult cuModuleUnload(void *) { return 0; }
CUresult cuModuleGetFunction(void **f, void *, const char *name) {
  FAKE_ENTRY(cuModuleGetFunction)
  *f = strdup(name); // leaked: a function lives as long as the module
  return 0;
}
CUresult cuFuncSetAttribute(void *, int, int) { return 0; }
CUresult cuFuncGetAttribute(int *v, int attribute, void *) {
  *v = attribute == 0 ? 1024 : 0; // MAX_THREADS_PER_BLOCK; no static smem
  return 0;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  FAKE_ENTRY(cuMemAlloc)
  void *m = std::aligned_alloc(256, (n + 255) / 256 * 256);
  if (!m)
    return 2;
  *p = reinterpret_cast<CUdeviceptr>(m);
  log("alloc %zu", n);
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  std::free(reinterpret_cast<void *>(p));
  log("free");
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
  std::memcpy(reinterpret_cast<void *>(d), s, n);
  log("htod %zu sync", n);
  return 0;
}
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
  std::memcpy(d, reinterpret_cast<void *>(s), n);
  log("dtoh %zu sync", n);
  return 0;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n,
                              void *stream) {
  std::memcpy(reinterpret_cast<void *>(d), s, n);
  log("htod %zu stream %p", n, stream);
  return 0;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n,
                         void *stream) {
  std::memset(reinterpret_cast<void *>(d), v, n);
  log("memset8 0x%llx %zu 0x%02x stream %p", d, n, v, stream);
  return 0;
}
CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n,
                          void *stream) {
  for (size_t i = 0; i < n; ++i)
    reinterpret_cast<uint16_t *>(d)[i] = v;
  log("memset16 0x%llx %zu 0x%04x stream %p", d, n, v, stream);
  return 0;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void *stream) {
  for (size_t i = 0; i < n; ++i)
    reinterpret_cast<uint32_t *>(d)[i] = v;
  log("memset32 0x%llx %zu 0x%08x stream %p", d, n, v, stream);
  return 0;
}
CUresult cuMemsetD2D32Async(CUdeviceptr d, size_t pitch, unsigned v,
                            size_t width, size_t height, void *stream) {
  for (size_t row = 0; row < height; ++row)
    for (size_t i = 0; i < width; ++i)
      reinterpret_cast<uint32_t *>(d + row * pitch)[i] = v;
  log("memset2d32 0x%llx pitch %zu 0x%08x %zux%zu stream %p", d, pitch, v,
      width, height, stream);
  return 0;
}
CUresult cuStreamCreate(void **s, unsigned) {
  *s = reinterpret_cast<void *>(0x3);
  return 0;
}
CUresult cuStreamDestroy_v2(void *) { return 0; }
CUresult cuStreamSynchronize(void *stream) {
  log("sync stream %p", stream);
  return 0;
}
CUresult cuStreamWaitEvent(void *stream, void *, unsigned) {
  log("wait stream %p", stream);
  return 0;
}
CUresult cuEventCreate(void **e, unsigned) {
  *e = std::calloc(1, sizeof(unsigned long long));
  return 0;
}
CUresult cuEventDestroy_v2(void *e) {
  std::free(e);
  return 0;
}
CUresult cuEventRecord(void *e, void *stream) {
  log("record stream %p", stream);
  std::memcpy(e, &fakeClock, sizeof fakeClock);
  return 0;
}
CUresult cuEventSynchronize(void *) {
  FAKE_ENTRY(cuEventSynchronize)
  log("sync event");
  return 0;
}
CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
  unsigned long long a, b;
  std::memcpy(&a, start, sizeof a);
  std::memcpy(&b, end, sizeof b);
  *ms = static_cast<float>(b - a) / 1000.0f;
  return 0;
}
CUresult cuEventElapsedTime_v2(float *ms, void *start, void *end) {
  return cuEventElapsedTime(ms, start, end);
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void *stream, void **params, void **) {
  FAKE_ENTRY(cuLaunchKernel)
  const char *name = static_cast<const char *>(f);
  std::string line = std::string("launch ") + name;
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, " stream %p", stream);
  line += buffer;
  const char *suffix = std::strrchr(name, '_');
  int count = suffix && suffix[1] == 'p' ? std::atoi(suffix + 2) : 0;
  for (int i = 0; i < count; ++i) {
    uint64_t value;
    std::memcpy(&value, params[i], 8);
    std::snprintf(buffer, sizeof buffer, " 0x%llx",
                  static_cast<unsigned long long>(value));
    line += buffer;
  }
  log("%s", line.c_str());
  if (std::strcmp(name, "copy_p3") == 0) {
    uint64_t from, to, bytes;
    std::memcpy(&from, params[0], 8);
    std::memcpy(&to, params[1], 8);
    std::memcpy(&bytes, params[2], 8);
    std::memcpy(reinterpret_cast<void *>(to), reinterpret_cast<void *>(from),
                bytes);
  }
  fakeClock += static_cast<unsigned long long>(gx) * gy * gz;
  (void)bx, (void)by, (void)bz, (void)smem;
  return 0;
}
CUresult cuTensorMapEncodeTiled(void *map, int, uint32_t rank, void *address,
                                const uint64_t *, const uint64_t *,
                                const uint32_t *, const uint32_t *, int, int,
                                int, int) {
  FAKE_ENTRY(cuTensorMapEncodeTiled)
  std::memset(map, 0, 128);
  uint64_t a = reinterpret_cast<uint64_t>(address);
  std::memcpy(map, &a, 8);
  std::memcpy(static_cast<char *>(map) + 8, &rank, 4);
  log("encode 0x%llx rank %u", static_cast<unsigned long long>(a), rank);
  return 0;
}

} // extern "C"
