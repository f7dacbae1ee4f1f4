/*===- nvfp4-c/Runtime.h - C API of the nvfp4 kernel runtime ------*- C -*-===*\
|*                                                                            *|
|* Part of the nvfp4 project.                                                 *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* A C interface to libnvfp4_runtime.so, for Python (ctypes) and other        *|
|* languages: load a kernel bundle written by nvfp4-compile (--emit=cubin or  *|
|* ptx, --report=manifest.json), give it the host function's arguments, run   *|
|* every launch, read the results back. See docs/Runtime.md.                  *|
|*                                                                            *|
|*   nvfp4rtBundle bundle;                                                    *|
|*   nvfp4rtSession session;                                                  *|
|*   if (nvfp4rtBundleLoad("k.cubin", "k.json", 0, &bundle) ||                *|
|*       nvfp4rtSessionCreate(bundle, &session))                              *|
|*     fprintf(stderr, "%s\n", nvfp4rtGetLastError());                        *|
|*   nvfp4rtSessionSetInput(session, 0, x, sizeof x);     argument 0          *|
|*   nvfp4rtSessionSetScalarInt(session, 1, 42);          argument 1          *|
|*   nvfp4rtSessionRun(session, 1, 0, NULL);                                  *|
|*   nvfp4rtSessionGetResult(session, 0, codes, sizeof codes);                *|
|*   nvfp4rtSessionDestroy(session);                                          *|
|*   nvfp4rtBundleDestroy(bundle);                                            *|
|*                                                                            *|
|* Every function returns NVFP4RT_SUCCESS (0) or one of the error codes       *|
|* below, and then nvfp4rtGetLastError() holds a one-line message (the CUDA   *|
|* error's name and text, and what was being done). Nothing aborts and no C++ *|
|* exception crosses this interface. Handles may be destroyed in any order:   *|
|* a session keeps its bundle alive. One session must not be used by two      *|
|* threads at once.                                                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef NVFP4_C_RUNTIME_H
#define NVFP4_C_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a function's signature or meaning changes. */
#define NVFP4RT_API_VERSION 2

/* Status codes (the same numbers as nvfp4::runtime::ErrorCode). */
#define NVFP4RT_SUCCESS 0
#define NVFP4RT_ERROR_INVALID_ARGUMENT 1 /* bad index, size or null pointer */
#define NVFP4RT_ERROR_IO 2               /* a file could not be read */
#define NVFP4RT_ERROR_INVALID_MANIFEST 3 /* manifest not JSON / not valid */
#define NVFP4RT_ERROR_NO_DEVICE 4        /* no driver, no GPU, wrong GPU */
#define NVFP4RT_ERROR_CUDA 5             /* a CUDA driver call failed */
#define NVFP4RT_ERROR_OUT_OF_MEMORY 6    /* host or device memory */

/* Kinds of host-function arguments (nvfp4rtBundleGetArgument). */
#define NVFP4RT_ARGUMENT_UNUSED 0 /* the kernels do not read it */
#define NVFP4RT_ARGUMENT_ARRAY 1  /* raw bytes, nvfp4rtSessionSetInput */
#define NVFP4RT_ARGUMENT_SCALAR 2 /* nvfp4rtSessionSetScalar{Int,Float} */

typedef struct nvfp4rtBundle_ *nvfp4rtBundle;
typedef struct nvfp4rtSession_ *nvfp4rtSession;
typedef struct nvfp4rtLauncher_ *nvfp4rtLauncher;

/* A caller's device allocator for launcher workspaces (stream ordered, like
 * PyTorch's caching allocator): allocate returns NVFP4RT_SUCCESS and a
 * 256-byte aligned address usable on `stream` (a CUstream), or any other
 * value on failure. */
typedef int (*nvfp4rtAllocateFunction)(void *userData, size_t bytes,
                                       void *stream, uint64_t *address);
typedef void (*nvfp4rtDeallocateFunction)(void *userData, uint64_t address,
                                          size_t bytes, void *stream);

/* NVFP4RT_API_VERSION of the library (to check a binding against it). */
int nvfp4rtGetApiVersion(void);

/* The message of the last failed call on this thread ("" if none). Valid
 * until the next failing call on this thread. */
const char *nvfp4rtGetLastError(void);

/* A short name for a status code ("no CUDA device", ...). */
const char *nvfp4rtStatusName(int status);

/* Parses and checks a manifest without a GPU; on success *description is a
 * readable summary (arguments, results, launches), valid until the next
 * call of this function on this thread. */
int nvfp4rtManifestDescribe(const char *manifestPath, const char **description);

/* Loads the CUDA driver, opens device `device`, reads the manifest and the
 * kernel image (cubin, fatbin or PTX) and loads it. */
int nvfp4rtBundleLoad(const char *imagePath, const char *manifestPath,
                      int device, nvfp4rtBundle *bundle);
/* The same from memory; the manifest is JSON text of manifestBytes bytes. */
int nvfp4rtBundleLoadFromMemory(const void *image, size_t imageBytes,
                                const char *manifestJson, size_t manifestBytes,
                                int device, nvfp4rtBundle *bundle);
void nvfp4rtBundleDestroy(nvfp4rtBundle bundle);

/* The device's name (valid as long as the bundle). */
int nvfp4rtBundleGetDeviceName(nvfp4rtBundle bundle, const char **name);
/* 1 + the highest host-function argument index the kernels use. */
int nvfp4rtBundleGetNumArguments(nvfp4rtBundle bundle, int64_t *count);
/* What argument `index` is: kind (NVFP4RT_ARGUMENT_*), its element or
 * scalar type ("bf16", "i64", ...; valid as long as the bundle; NULL for an
 * unused argument) and, for arrays, the exact byte count it needs. Any
 * output pointer may be NULL. */
int nvfp4rtBundleGetArgument(nvfp4rtBundle bundle, int64_t index, int *kind,
                             const char **type, size_t *bytes);
/* 1 + the highest host-function result index held in a device buffer. */
int nvfp4rtBundleGetNumResults(nvfp4rtBundle bundle, int64_t *count);
/* Element type, element count and byte count of result `index`; an error
 * for a result that is not a device buffer. Outputs may be NULL. */
int nvfp4rtBundleGetResult(nvfp4rtBundle bundle, int64_t index,
                           const char **elementType, int64_t *elements,
                           size_t *bytes);
int nvfp4rtBundleGetNumKernels(nvfp4rtBundle bundle, int64_t *count);
int nvfp4rtBundleGetKernelName(nvfp4rtBundle bundle, int64_t index,
                               const char **name);

/* Allocates the bundle's device buffers. */
int nvfp4rtSessionCreate(nvfp4rtBundle bundle, nvfp4rtSession *session);
void nvfp4rtSessionDestroy(nvfp4rtSession session);
/* Uploads array argument `argument`; `bytes` must be exactly its size. */
int nvfp4rtSessionSetInput(nvfp4rtSession session, int64_t argument,
                           const void *data, size_t bytes);
/* Sets scalar argument `argument`; converted to its type at launch (an
 * integer type rejects a float with a fractional part). */
int nvfp4rtSessionSetScalarInt(nvfp4rtSession session, int64_t argument,
                               int64_t value);
int nvfp4rtSessionSetScalarFloat(nvfp4rtSession session, int64_t argument,
                                 double value);
/* Runs every launch `repeat` times (after `warmup` untimed runs); internal
 * buffers are re-initialized before each. If `milliseconds` is not NULL it
 * receives `repeat` times (CUDA events around the launch sequence). */
int nvfp4rtSessionRun(nvfp4rtSession session, int repeat, int warmup,
                      float *milliseconds);
/* Downloads result `result`; `bytes` must be exactly its size. */
int nvfp4rtSessionGetResult(nvfp4rtSession session, int64_t result, void *data,
                            size_t bytes);

/* Launching on the caller's memory and stream (nvfp4::runtime::Launcher):
 * no host copies, no synchronization. Array arguments and results are the
 * caller's device addresses (16-byte aligned); every other buffer lives in a
 * workspace of nvfp4rtLauncherGetWorkspaceBytes bytes, which the caller
 * passes to each launch, or which comes from the allocator set, or from a
 * pool the launcher keeps. Tensor maps are encoded per set of addresses and
 * cached. Not thread-safe. */
int nvfp4rtLauncherCreate(nvfp4rtBundle bundle, nvfp4rtLauncher *launcher);
void nvfp4rtLauncherDestroy(nvfp4rtLauncher launcher);
int nvfp4rtLauncherGetWorkspaceBytes(nvfp4rtLauncher launcher, size_t *bytes);
/* The byte offset of manifest buffer `buffer` in the workspace, or -1 for a
 * buffer that is an argument or a result. */
int nvfp4rtLauncherGetWorkspaceOffset(nvfp4rtLauncher launcher, int64_t buffer,
                                      int64_t *offset);
/* Both NULL: back to the launcher's pool. */
int nvfp4rtLauncherSetAllocator(nvfp4rtLauncher launcher,
                                nvfp4rtAllocateFunction allocate,
                                nvfp4rtDeallocateFunction deallocate,
                                void *userData);
/* Non-zero: write 0xAB into scratch and result buffers without other
 * initial contents before each launch (default 0). */
int nvfp4rtLauncherSetPoison(nvfp4rtLauncher launcher, int poison);
int nvfp4rtLauncherSetTensorMapCacheCapacity(nvfp4rtLauncher launcher,
                                             size_t sets);
int nvfp4rtLauncherSetScalarInt(nvfp4rtLauncher launcher, int64_t argument,
                                int64_t value);
int nvfp4rtLauncherSetScalarFloat(nvfp4rtLauncher launcher, int64_t argument,
                                  double value);
/* Enqueues every kernel on `stream` (a CUstream; NULL: the default stream).
 * arguments[i]: device address of array argument i (numArguments =
 * nvfp4rtBundleGetNumArguments; entries of scalar or unused arguments are
 * ignored); results[r]: device address of result r (numResults =
 * nvfp4rtBundleGetNumResults); workspace: its address, or 0. */
int nvfp4rtLauncherLaunch(nvfp4rtLauncher launcher, void *stream,
                          const uint64_t *arguments, int64_t numArguments,
                          const uint64_t *results, int64_t numResults,
                          uint64_t workspace);
/* Enqueues the kernels kernels[0..numKernels) (manifest indices, each at
 * most once, in that order), initializing scratch and result buffers first
 * only if `initialize` is non-zero: one part of a launch split around
 * work between the parts (a cross-rank amax reduction). A subset needs the
 * caller's `workspace`, the same for every part. */
int nvfp4rtLauncherLaunchKernels(nvfp4rtLauncher launcher, void *stream,
                                 const uint64_t *arguments,
                                 int64_t numArguments, const uint64_t *results,
                                 int64_t numResults, uint64_t workspace,
                                 const int64_t *kernels, int64_t numKernels,
                                 int initialize);
/* Tensor-map cache statistics; outputs may be NULL. */
int nvfp4rtLauncherGetTensorMapCacheStats(nvfp4rtLauncher launcher,
                                          size_t *hits, size_t *misses,
                                          size_t *evictions, size_t *entries);

#ifdef __cplusplus
}
#endif

#endif /* NVFP4_C_RUNTIME_H */
