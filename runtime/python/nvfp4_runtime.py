"""Run nvfp4 kernel bundles from Python (ctypes over libnvfp4_runtime.so).

A bundle is what ``nvfp4-compile`` writes for one host function: the kernel
image (``--emit=cubin`` or ``--emit=ptx``) and the JSON manifest
(``--report``). This module loads it on a CUDA device and runs it with
numpy arrays::

    import numpy as np
    import nvfp4_runtime as rt

    with rt.load("k.cubin", "k.json") as bundle:     # device 0
        codes, scales, amax = bundle.run(x_bf16_bits, 42)
        print(bundle.last_times_ms)                   # CUDA-event timing

``run`` takes the host function's arguments in order: a numpy array for an
array argument (its bytes are uploaded; the size must match the manifest
exactly and the dtype the argument's element type: for bf16, uint16 bit
patterns, ``ml_dtypes.bfloat16``, or float32 when every value is
BF16-representable, as ``nvfp4.quantize`` accepts them; native byte order
only), a Python or numpy number for a scalar argument. Arguments the kernels do not use are
ignored. It returns the function's results as 1-D numpy arrays of the
manifest's element type (bf16 as uint16 bit patterns, i8 as uint8, i32 as
uint32, f32 as float32, ...), ``None`` for a result that is not a device
buffer.

Buffers that do not hold arguments start as 0xAB bytes (or zeros, when the
manifest says so) before every run, exactly as in
``integration_test/run_cases.py``.

Errors raise ``RuntimeError`` subclasses carrying the library's one-line
message: ``NoDeviceError`` (no CUDA driver, no GPU, or a GPU the bundle was
not compiled for), ``ManifestError``, ``CudaError``; bad arguments raise
``ValueError``.

Frameworks launch on their own memory and stream instead, with no copy and
no synchronization (``Launcher``)::

    launcher = bundle.launcher()
    ws = torch.empty(launcher.workspace_bytes, dtype=torch.uint8, device="cuda")
    launcher.launch([x, w, seed], [y], stream=torch.cuda.current_stream(),
                    workspace=ws)

The library is found through ``$NVFP4_RUNTIME_LIBRARY``, then next to this
file, in ``../lib`` (the build tree's ``python_packages`` and an install's
``lib/python``), and finally on the loader's search path. The CUDA driver is
``libcuda.so.1`` unless ``$NVFP4_CUDA_DRIVER`` names another library.
"""
import ctypes
import os

import numpy as np

__all__ = ["load", "describe_manifest", "Bundle", "Launcher",
           "Nvfp4RuntimeError", "NoDeviceError", "ManifestError", "CudaError",
           "library"]

# Status codes of nvfp4-c/Runtime.h.
_SUCCESS = 0
_INVALID_ARGUMENT = 1
_IO = 2
_INVALID_MANIFEST = 3
_NO_DEVICE = 4
_CUDA = 5
_OUT_OF_MEMORY = 6
_API_VERSION = 2

_ARRAY = 1
_SCALAR = 2

_DTYPES = {"i1": np.uint8, "i8": np.uint8, "i16": np.uint16,
           "i32": np.uint32, "i64": np.int64, "index": np.int64,
           "f16": np.float16, "bf16": np.uint16, "f32": np.float32,
           "f64": np.float64, "f8E4M3FN": np.uint8, "f8E5M2": np.uint8}


class Nvfp4RuntimeError(RuntimeError):
    """A failure reported by libnvfp4_runtime; ``status`` is its code."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class NoDeviceError(Nvfp4RuntimeError):
    """No CUDA driver, no GPU, or a GPU the bundle was not compiled for."""


class ManifestError(Nvfp4RuntimeError):
    """The manifest is missing, not JSON, or does not describe a bundle."""


class CudaError(Nvfp4RuntimeError):
    """A CUDA driver call failed (the message names it and the error)."""


_lib = None

# nvfp4rtAllocateFunction / nvfp4rtDeallocateFunction.
_ALLOCATE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t,
                             ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64))
_DEALLOCATE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64,
                               ctypes.c_size_t, ctypes.c_void_p)

_INT_MAX = 2 ** 31 - 1
_MAX_REPEAT = 10 ** 9


def _candidates():
    env = os.environ.get("NVFP4_RUNTIME_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    names = ["libnvfp4_runtime.so"]
    return ([os.path.join(here, n) for n in names] +
            [os.path.join(here, "..", "lib", n) for n in names] +
            [os.path.join(here, "..", n) for n in names] + names)


def library():
    """The loaded ctypes library (loaded on first use)."""
    global _lib
    if _lib is not None:
        return _lib
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            continue
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError as e:
            errors.append(str(e))
    else:
        raise OSError("cannot load libnvfp4_runtime.so (set "
                      "NVFP4_RUNTIME_LIBRARY): " + "; ".join(errors or
                                                             ["not found"]))
    _declare(lib)
    version = lib.nvfp4rtGetApiVersion()
    if version != _API_VERSION:
        raise OSError(f"libnvfp4_runtime.so has API version {version}, "
                      f"this module needs {_API_VERSION}")
    _lib = lib
    return lib


# Entry points an older libnvfp4_runtime.so of the same API version may
# lack (added without breaking callers); a call says so.
_OPTIONAL = {"nvfp4rtLauncherLaunchKernels"}


def _declare(lib):
    c_int, c_int64, c_size_t = ctypes.c_int, ctypes.c_int64, ctypes.c_size_t
    c_char_p, c_void_p = ctypes.c_char_p, ctypes.c_void_p
    pp = ctypes.POINTER
    signatures = {
        "nvfp4rtGetApiVersion": (c_int, []),
        "nvfp4rtGetLastError": (c_char_p, []),
        "nvfp4rtManifestDescribe": (c_int, [c_char_p, pp(c_char_p)]),
        "nvfp4rtBundleLoad": (c_int, [c_char_p, c_char_p, c_int,
                                      pp(c_void_p)]),
        "nvfp4rtBundleDestroy": (None, [c_void_p]),
        "nvfp4rtBundleGetDeviceName": (c_int, [c_void_p, pp(c_char_p)]),
        "nvfp4rtBundleGetNumArguments": (c_int, [c_void_p, pp(c_int64)]),
        "nvfp4rtBundleGetArgument": (c_int, [c_void_p, c_int64, pp(c_int),
                                             pp(c_char_p), pp(c_size_t)]),
        "nvfp4rtBundleGetNumResults": (c_int, [c_void_p, pp(c_int64)]),
        "nvfp4rtBundleGetResult": (c_int, [c_void_p, c_int64, pp(c_char_p),
                                           pp(c_int64), pp(c_size_t)]),
        "nvfp4rtBundleGetNumKernels": (c_int, [c_void_p, pp(c_int64)]),
        "nvfp4rtBundleGetKernelName": (c_int, [c_void_p, c_int64,
                                               pp(c_char_p)]),
        "nvfp4rtSessionCreate": (c_int, [c_void_p, pp(c_void_p)]),
        "nvfp4rtSessionDestroy": (None, [c_void_p]),
        "nvfp4rtSessionSetInput": (c_int, [c_void_p, c_int64, c_void_p,
                                           c_size_t]),
        "nvfp4rtSessionSetScalarInt": (c_int, [c_void_p, c_int64, c_int64]),
        "nvfp4rtSessionSetScalarFloat": (c_int, [c_void_p, c_int64,
                                                 ctypes.c_double]),
        "nvfp4rtSessionRun": (c_int, [c_void_p, c_int, c_int,
                                      pp(ctypes.c_float)]),
        "nvfp4rtSessionGetResult": (c_int, [c_void_p, c_int64, c_void_p,
                                            c_size_t]),
        "nvfp4rtLauncherCreate": (c_int, [c_void_p, pp(c_void_p)]),
        "nvfp4rtLauncherDestroy": (None, [c_void_p]),
        "nvfp4rtLauncherGetWorkspaceBytes": (c_int, [c_void_p, pp(c_size_t)]),
        "nvfp4rtLauncherGetWorkspaceOffset": (c_int, [c_void_p, c_int64,
                                                      pp(c_int64)]),
        "nvfp4rtLauncherSetAllocator": (c_int, [c_void_p, _ALLOCATE,
                                                _DEALLOCATE, c_void_p]),
        "nvfp4rtLauncherSetPoison": (c_int, [c_void_p, c_int]),
        "nvfp4rtLauncherSetTensorMapCacheCapacity": (c_int, [c_void_p,
                                                             c_size_t]),
        "nvfp4rtLauncherSetScalarInt": (c_int, [c_void_p, c_int64, c_int64]),
        "nvfp4rtLauncherSetScalarFloat": (c_int, [c_void_p, c_int64,
                                                  ctypes.c_double]),
        "nvfp4rtLauncherLaunch": (c_int, [c_void_p, c_void_p, pp(ctypes.c_uint64),
                                          c_int64, pp(ctypes.c_uint64),
                                          c_int64, ctypes.c_uint64]),
        "nvfp4rtLauncherLaunchKernels": (c_int, [
            c_void_p, c_void_p, pp(ctypes.c_uint64), c_int64,
            pp(ctypes.c_uint64), c_int64, ctypes.c_uint64, pp(c_int64),
            c_int64, c_int]),
        "nvfp4rtLauncherGetTensorMapCacheStats": (c_int, [c_void_p] +
                                                  [pp(c_size_t)] * 4),
    }
    for name, signature in signatures.items():
        if signature is None:
            continue
        restype, argtypes = signature
        if name in _OPTIONAL and not hasattr(lib, name):
            continue
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes


def _check(status):
    if status == _SUCCESS:
        return
    message = library().nvfp4rtGetLastError().decode("utf-8", "replace")
    if status == _INVALID_ARGUMENT:
        raise ValueError(message)
    if status == _NO_DEVICE:
        raise NoDeviceError(message, status)
    if status in (_INVALID_MANIFEST, _IO):
        raise ManifestError(message, status)
    if status == _OUT_OF_MEMORY:
        raise MemoryError(message)
    raise CudaError(message, status)


def describe_manifest(manifest_path):
    """A readable summary of a manifest (no GPU needed); raises
    ManifestError when it cannot be read or is not valid."""
    text = ctypes.c_char_p()
    _check(library().nvfp4rtManifestDescribe(os.fsencode(manifest_path),
                                             ctypes.byref(text)))
    return text.value.decode()


def load(image_path, manifest_path, device=0):
    """Loads a bundle (kernel image + manifest) on CUDA device `device`."""
    return Bundle(image_path, manifest_path, device)


def _count(value, name, minimum, maximum):
    """An int in [minimum, maximum] (no bool, no float: 1.5 devices or a
    repeat count that wraps modulo 2^32 are mistakes)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got "
                         f"{type(value).__name__}")
    value = int(value)
    if not minimum <= value <= maximum:
        raise ValueError(f"{name} must be in [{minimum}, {maximum}], got "
                         f"{value}")
    return value


# Element types and the numpy dtypes whose bytes they take as they are
# (besides the conversions of _as_argument_array).
_ACCEPTED_KINDS = {
    "i1": ("u1", "i1", "b1"), "i8": ("u1", "i1"), "f8E4M3FN": ("u1",),
    "f8E5M2": ("u1",), "i16": ("u2", "i2"), "i32": ("u4", "i4"),
    "i64": ("u8", "i8"), "index": ("u8", "i8"), "f16": ("f2", "u2"),
    "bf16": ("u2",), "f32": ("f4",), "f64": ("f8",),
}
# ml_dtypes names of the narrow float types, which numpy alone lacks.
_ML_DTYPES = {"bf16": "bfloat16", "f8E4M3FN": "float8_e4m3fn",
              "f8E5M2": "float8_e5m2"}


def _as_argument_array(value, type_name, index):
    """`value` as a contiguous numpy array whose raw bytes are the
    manifest's `type_name` elements; ValueError for a dtype whose bytes mean
    something else (f16 or f64 for bf16, big-endian data, ...)."""
    array = np.asarray(value)
    dtype = array.dtype
    if not dtype.isnative:
        raise ValueError(f"argument {index}: {dtype.str} data is not in the "
                         f"machine's byte order; the kernels read native "
                         f"{type_name} elements")
    if type_name == "bf16" and dtype == np.float32:
        return _bf16_bits(array)
    if _ML_DTYPES.get(type_name) == dtype.name and dtype.itemsize in (1, 2):
        return np.ascontiguousarray(array).view(
            np.uint8 if dtype.itemsize == 1 else np.uint16)
    kind = f"{dtype.kind}{dtype.itemsize}"
    if kind not in _ACCEPTED_KINDS.get(type_name, (kind,)):
        accepted = {"bf16": "uint16 bit patterns, ml_dtypes.bfloat16 or "
                            "BF16-representable float32"}.get(
            type_name, " or ".join(np.dtype(k).name for k in
                                   _ACCEPTED_KINDS.get(type_name, ())))
        raise ValueError(f"argument {index}: a {dtype.name} array cannot be "
                         f"a {type_name} argument (give {accepted})")
    return np.ascontiguousarray(array)


def _address(value, what):
    """The device address of `value`: an int, an object with data_ptr()
    (a PyTorch tensor) or __cuda_array_interface__ (CuPy, Numba)."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{what}: expected a device address, got a bool")
    if isinstance(value, (int, np.integer)):
        address = int(value)
    elif hasattr(value, "data_ptr"):
        address = int(value.data_ptr())
    elif hasattr(value, "__cuda_array_interface__"):
        address = int(value.__cuda_array_interface__["data"][0])
    else:
        raise ValueError(f"{what}: expected a device address, a tensor or a "
                         f"CUDA array, got {type(value).__name__}")
    if not 0 <= address < 2 ** 64:
        raise ValueError(f"{what}: {address} is not an address")
    return address


def _device_nbytes(value):
    """Bytes of a tensor or CUDA array (None for a bare address), and whether
    it is dense (C-contiguous)."""
    if hasattr(value, "data_ptr") and hasattr(value, "element_size"):
        return (int(value.numel()) * int(value.element_size()),
                bool(value.is_contiguous()))
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is not None:
        count = 1
        for d in interface["shape"]:
            count *= int(d)
        itemsize = np.dtype(interface["typestr"]).itemsize
        strides = interface.get("strides")
        dense = strides is None
        if not dense:
            expected, dense = itemsize, True
            for d, s in zip(reversed(interface["shape"]), reversed(strides)):
                dense = dense and (d == 1 or s == expected)
                expected *= d
        return count * itemsize, dense
    return None, True


def _stream_handle(stream):
    """A CUstream from an int, a torch.cuda.Stream (.cuda_stream) or a
    CuPy stream (.ptr); None or 0 is the default stream."""
    if stream is None:
        return 0
    for attribute in ("cuda_stream", "ptr"):
        if hasattr(stream, attribute):
            stream = getattr(stream, attribute)
            break
    if isinstance(stream, (bool, np.bool_)) or not isinstance(
            stream, (int, np.integer)):
        raise ValueError(f"stream: expected a CUstream handle, got "
                         f"{type(stream).__name__}")
    return int(stream)


def _bf16_bits(array):
    """float32 values that are exactly BF16 -> their uint16 bit patterns."""
    bits = np.ascontiguousarray(array, np.float32).view(np.uint32)
    if np.any(bits & 0xFFFF):
        raise ValueError("a float32 array for a bf16 argument must hold "
                         "BF16-representable values (or pass uint16 bits)")
    return (bits >> 16).astype(np.uint16)


class Bundle:
    """A kernel bundle loaded on one device, with its device buffers.

    Attributes: ``device_name``, ``arguments`` (per host-function argument:
    ``None`` if unused, else ``("array", type, bytes)`` or
    ``("scalar", type, None)``), ``results`` (per result: ``(type,
    elements)`` or ``None``), ``kernels`` (launch names in order),
    ``last_times_ms`` (times of the last ``run``).
    """

    def __init__(self, image_path, manifest_path, device=0):
        lib = library()
        self._lib = lib
        self._bundle = None
        self._session = None
        device = _count(device, "device", 0, _INT_MAX)
        handle = ctypes.c_void_p()
        _check(lib.nvfp4rtBundleLoad(os.fsencode(image_path),
                                     os.fsencode(manifest_path), device,
                                     ctypes.byref(handle)))
        self._bundle = handle

        name = ctypes.c_char_p()
        _check(lib.nvfp4rtBundleGetDeviceName(handle, ctypes.byref(name)))
        self.device_name = name.value.decode()

        count = ctypes.c_int64()
        _check(lib.nvfp4rtBundleGetNumArguments(handle, ctypes.byref(count)))
        self.arguments = []
        for i in range(count.value):
            kind, type_name = ctypes.c_int(), ctypes.c_char_p()
            size = ctypes.c_size_t()
            _check(lib.nvfp4rtBundleGetArgument(
                handle, i, ctypes.byref(kind), ctypes.byref(type_name),
                ctypes.byref(size)))
            if kind.value == _ARRAY:
                self.arguments.append(("array", type_name.value.decode(),
                                       size.value))
            elif kind.value == _SCALAR:
                self.arguments.append(("scalar", type_name.value.decode(),
                                       None))
            else:
                self.arguments.append(None)

        _check(lib.nvfp4rtBundleGetNumResults(handle, ctypes.byref(count)))
        self.results = []
        for i in range(count.value):
            type_name, elements = ctypes.c_char_p(), ctypes.c_int64()
            size = ctypes.c_size_t()
            status = lib.nvfp4rtBundleGetResult(
                handle, i, ctypes.byref(type_name), ctypes.byref(elements),
                ctypes.byref(size))
            self.results.append((type_name.value.decode(), elements.value)
                                if status == _SUCCESS else None)

        _check(lib.nvfp4rtBundleGetNumKernels(handle, ctypes.byref(count)))
        self.kernels = []
        for i in range(count.value):
            _check(lib.nvfp4rtBundleGetKernelName(handle, i,
                                                  ctypes.byref(name)))
            self.kernels.append(name.value.decode())
        self.last_times_ms = []

    def _ensure_session(self):
        if self._bundle is None:
            raise ValueError("the bundle is closed")
        if self._session is None:
            session = ctypes.c_void_p()
            _check(self._lib.nvfp4rtSessionCreate(self._bundle,
                                                  ctypes.byref(session)))
            self._session = session
        return self._session

    def run(self, *args, repeat=1, warmup=0):
        """Runs the host function on `args` (see the module docstring) and
        returns its results. With repeat > 1 the launch sequence runs that
        many times (buffers re-initialized each time); ``last_times_ms``
        holds one time per repetition."""
        repeat = _count(repeat, "repeat", 1, _MAX_REPEAT)
        warmup = _count(warmup, "warmup", 0, _MAX_REPEAT)
        used = [i for i, a in enumerate(self.arguments) if a is not None]
        if used and len(args) <= used[-1]:
            raise ValueError(f"the bundle's function takes at least "
                             f"{used[-1] + 1} arguments, {len(args)} given")
        session = self._ensure_session()
        lib = self._lib
        for index, spec in enumerate(self.arguments):
            if spec is None:
                continue
            kind, type_name, size = spec
            value = args[index]
            if kind == "array":
                array = _as_argument_array(value, type_name, index)
                if array.nbytes != size:
                    raise ValueError(
                        f"argument {index}: {array.nbytes} bytes given, the "
                        f"kernels expect {size} ({type_name} elements)")
                _check(lib.nvfp4rtSessionSetInput(
                    session, index, array.ctypes.data_as(ctypes.c_void_p),
                    array.nbytes))
            else:
                if isinstance(value, (bool, np.bool_)):
                    value = int(value)
                if isinstance(value, (int, np.integer)):
                    _check(lib.nvfp4rtSessionSetScalarInt(session, index,
                                                          _to_int64(value)))
                elif isinstance(value, (float, np.floating)):
                    _check(lib.nvfp4rtSessionSetScalarFloat(session, index,
                                                            float(value)))
                else:
                    raise ValueError(f"argument {index}: expected a number "
                                     f"for the {type_name} scalar, got "
                                     f"{type(value).__name__}")
        times = (ctypes.c_float * repeat)()
        _check(lib.nvfp4rtSessionRun(session, repeat, warmup, times))
        self.last_times_ms = list(times)

        outputs = []
        for index, spec in enumerate(self.results):
            if spec is None:
                outputs.append(None)
                continue
            type_name, elements = spec
            out = np.empty(elements, _DTYPES.get(type_name, np.uint8))
            _check(lib.nvfp4rtSessionGetResult(
                session, index, out.ctypes.data_as(ctypes.c_void_p),
                out.nbytes))
            outputs.append(out)
        return outputs

    def launcher(self):
        """A Launcher: this bundle on the caller's memory and stream."""
        return Launcher(self)

    def close(self):
        """Frees the device buffers and unloads the kernels (launchers keep
        the kernels loaded until they are closed too)."""
        if self._session is not None:
            self._lib.nvfp4rtSessionDestroy(self._session)
            self._session = None
        if self._bundle is not None:
            self._lib.nvfp4rtBundleDestroy(self._bundle)
            self._bundle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Launcher:
    """A bundle launched on the caller's device memory and stream (no host
    copies, no synchronization; docs/Runtime.md, "Launching on the caller's
    memory").

    ``workspace_bytes`` is the size of the scratch memory a launch needs;
    ``workspace_offset(buffer)`` where manifest buffer ``buffer`` lives in it
    (None for argument and result buffers, which are the caller's).
    """

    def __init__(self, bundle):
        if bundle._bundle is None:
            raise ValueError("the bundle is closed")
        self._lib = bundle._lib
        self._handle = None
        self._allocator = None
        self.arguments = bundle.arguments
        self.results = bundle.results
        handle = ctypes.c_void_p()
        _check(self._lib.nvfp4rtLauncherCreate(bundle._bundle,
                                               ctypes.byref(handle)))
        self._handle = handle
        size = ctypes.c_size_t()
        _check(self._lib.nvfp4rtLauncherGetWorkspaceBytes(handle,
                                                          ctypes.byref(size)))
        self.workspace_bytes = size.value
        self._arguments = (ctypes.c_uint64 * max(len(self.arguments), 1))()
        self._results = (ctypes.c_uint64 * max(len(self.results), 1))()

    def workspace_offset(self, buffer):
        offset = ctypes.c_int64()
        _check(self._lib.nvfp4rtLauncherGetWorkspaceOffset(
            self._require(), _count(buffer, "buffer", 0, 2 ** 62),
            ctypes.byref(offset)))
        return None if offset.value < 0 else offset.value

    def _require(self):
        if self._handle is None:
            raise ValueError("the launcher is closed")
        return self._handle

    def set_allocator(self, allocate=None, deallocate=None):
        """Workspaces from the caller: ``allocate(bytes, stream) -> address``
        and ``deallocate(address, bytes, stream)``, both stream ordered;
        ``set_allocator()`` goes back to the launcher's pool."""
        handle = self._require()
        if (allocate is None) != (deallocate is None):
            raise ValueError("give both allocate and deallocate, or neither")
        if allocate is None:
            _check(self._lib.nvfp4rtLauncherSetAllocator(
                handle, ctypes.cast(None, _ALLOCATE),
                ctypes.cast(None, _DEALLOCATE), None))
            self._allocator = None
            return

        def allocate_c(_user, size, stream, out):
            try:
                out[0] = int(allocate(int(size), int(stream or 0)))
                return _SUCCESS
            except Exception:  # reported as a failed allocation
                return _OUT_OF_MEMORY

        def deallocate_c(_user, address, size, stream):
            try:
                deallocate(int(address), int(size), int(stream or 0))
            except Exception:
                pass

        callbacks = (_ALLOCATE(allocate_c), _DEALLOCATE(deallocate_c))
        _check(self._lib.nvfp4rtLauncherSetAllocator(handle, callbacks[0],
                                                      callbacks[1], None))
        self._allocator = callbacks  # alive as long as the launcher uses them

    def set_poison(self, poison):
        _check(self._lib.nvfp4rtLauncherSetPoison(self._require(),
                                                   1 if poison else 0))

    def set_tensor_map_cache_capacity(self, sets):
        _check(self._lib.nvfp4rtLauncherSetTensorMapCacheCapacity(
            self._require(), _count(sets, "sets", 1, 2 ** 31)))

    def tensor_map_cache_stats(self):
        """{"hits", "misses", "evictions", "entries"}."""
        values = [ctypes.c_size_t() for _ in range(4)]
        _check(self._lib.nvfp4rtLauncherGetTensorMapCacheStats(
            self._require(), *[ctypes.byref(v) for v in values]))
        return dict(zip(("hits", "misses", "evictions", "entries"),
                        (v.value for v in values)))

    def launch(self, arguments, results, stream=None, workspace=None,
               kernels=None, initialize=True):
        """Enqueues the kernels on `stream` (a CUstream handle, a
        torch.cuda.Stream or a CuPy stream; None: the default stream).

        `kernels`: None for every kernel in manifest order, or a list of
        manifest kernel indices to launch in that order -- one part of a
        launch split around other work (the caller's `workspace` is then
        required, the same for every part, and `initialize=False` for the
        parts after the first: buffers are initialized once).

        `arguments`: one entry per host-function argument: for an array
        argument its device memory (an address, a tensor or a CUDA array;
        tensors and arrays must be dense and have exactly the argument's
        bytes), for a scalar argument a number, for an unused one anything.
        `results`: the same for each result. `workspace`: device memory of
        at least ``workspace_bytes`` (256-byte aligned), or None for the
        allocator set or the launcher's pool."""
        handle = self._require()
        lib = self._lib
        if len(arguments) != len(self.arguments):
            raise ValueError(f"{len(arguments)} arguments given, the bundle's "
                             f"function takes {len(self.arguments)}")
        if len(results) != len(self.results):
            raise ValueError(f"{len(results)} results given, the bundle has "
                             f"{len(self.results)}")
        for index, spec in enumerate(self.arguments):
            value = arguments[index]
            self._arguments[index] = 0
            if spec is None:
                continue
            kind, type_name, size = spec
            if kind == "array":
                self._arguments[index] = self._memory(
                    value, size, f"argument {index} ({type_name})")
            elif isinstance(value, (bool, np.bool_, int, np.integer)):
                _check(lib.nvfp4rtLauncherSetScalarInt(handle, index,
                                                       _to_int64(value)))
            elif isinstance(value, (float, np.floating)):
                _check(lib.nvfp4rtLauncherSetScalarFloat(handle, index,
                                                         float(value)))
            else:
                raise ValueError(f"argument {index}: expected a number for "
                                 f"the {type_name} scalar, got "
                                 f"{type(value).__name__}")
        for index, spec in enumerate(self.results):
            self._results[index] = 0
            if spec is not None:
                type_name, elements = spec
                size = elements * np.dtype(_DTYPES.get(type_name,
                                                       np.uint8)).itemsize
                self._results[index] = self._memory(
                    results[index], size, f"result {index} ({type_name})")
        if workspace is None:
            workspace_address = 0
        else:
            workspace_address = _address(workspace, "workspace")
            nbytes, dense = _device_nbytes(workspace)
            if nbytes is not None and nbytes < self.workspace_bytes:
                raise ValueError(f"workspace: {nbytes} bytes given, the "
                                 f"launch needs {self.workspace_bytes}")
        if kernels is None:
            _check(lib.nvfp4rtLauncherLaunch(
                handle, ctypes.c_void_p(_stream_handle(stream)),
                self._arguments, len(self.arguments), self._results,
                len(self.results), workspace_address))
            return
        if not hasattr(lib, "nvfp4rtLauncherLaunchKernels"):
            raise Nvfp4RuntimeError(
                "this libnvfp4_runtime.so cannot launch part of a bundle "
                "(no nvfp4rtLauncherLaunchKernels): rebuild it",
                _INVALID_ARGUMENT)
        indices = [int(k) for k in kernels]
        array = (ctypes.c_int64 * max(len(indices), 1))(*indices)
        _check(lib.nvfp4rtLauncherLaunchKernels(
            handle, ctypes.c_void_p(_stream_handle(stream)), self._arguments,
            len(self.arguments), self._results, len(self.results),
            workspace_address, array, len(indices), 1 if initialize else 0))

    @staticmethod
    def _memory(value, size, what):
        address = _address(value, what)
        nbytes, dense = _device_nbytes(value)
        if not dense:
            raise ValueError(f"{what}: the memory is not dense (C-contiguous)")
        if nbytes is not None and nbytes != size:
            raise ValueError(f"{what}: {nbytes} bytes given, the kernels "
                             f"expect {size}")
        return address

    def close(self):
        if self._handle is not None:
            self._lib.nvfp4rtLauncherDestroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _to_int64(value):
    """An int as the int64 the C API takes; values up to 2^64-1 are passed
    as their two's complement (a 64-bit seed, say)."""
    value = int(value)
    if not -(1 << 63) <= value < (1 << 64):
        raise ValueError(f"{value} does not fit in 64 bits")
    return value - (1 << 64) if value >= (1 << 63) else value
