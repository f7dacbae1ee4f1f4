// A stand-in for libcuda.so.1 with only what nvfp4_tensormap.py calls:
// cuTensorMapEncodeTiled writes the arguments it received into the
// 128-byte descriptor (so that a test without a GPU sees exactly what the
// driver would get) and fails with CUDA_ERROR_INVALID_VALUE (1) for the
// global address 0xBAD000 or a descriptor that is not 64-byte aligned.
#include <cstdint>
#include <cstring>

extern "C" {

int cuInit(unsigned) { return 0; }

int cuGetErrorName(int error, const char **name) {
  *name = error == 1 ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_UNKNOWN";
  return 0;
}

int cuTensorMapEncodeTiled(void *map, int dataType, uint32_t rank,
                           void *address, const uint64_t *globalDim,
                           const uint64_t *globalStrides,
                           const uint32_t *boxDim,
                           const uint32_t *elementStrides, int interleave,
                           int swizzle, int l2Promotion, int oobFill) {
  if (reinterpret_cast<uintptr_t>(map) % 64 != 0 ||
      reinterpret_cast<uintptr_t>(address) == 0xBAD000 || rank < 1 ||
      rank > 5)
    return 1;
  // Layout: u64 address, then u32 dataType, rank, interleave, swizzle,
  // l2Promotion, oobFill, globalDim[5], globalStrides[4], boxDim[5],
  // elementStrides[5] (unused entries zero).
  uint32_t words[32] = {};
  uint64_t a = reinterpret_cast<uintptr_t>(address);
  std::memcpy(words, &a, 8);
  uint32_t *w = words + 2;
  *w++ = dataType;
  *w++ = rank;
  *w++ = interleave;
  *w++ = swizzle;
  *w++ = l2Promotion;
  *w++ = oobFill;
  for (uint32_t i = 0; i < 5; ++i)
    *w++ = i < rank ? uint32_t(globalDim[i]) : 0;
  for (uint32_t i = 0; i < 4; ++i)
    *w++ = i + 1 < rank ? uint32_t(globalStrides[i]) : 0;
  for (uint32_t i = 0; i < 5; ++i)
    *w++ = i < rank ? boxDim[i] : 0;
  for (uint32_t i = 0; i < 5; ++i)
    *w++ = i < rank ? elementStrides[i] : 0;
  std::memcpy(map, words, sizeof(words));
  return 0;
}

} // extern "C"
