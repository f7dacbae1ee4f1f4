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
array argument (its raw bytes are uploaded; the size must match the
manifest exactly; a float32 array is accepted for a bf16 argument when every
value is BF16-representable, as ``nvfp4.quantize`` accepts them), a Python
or numpy number for a scalar argument. Arguments the kernels do not use are
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

The library is found through ``$NVFP4_RUNTIME_LIBRARY``, then next to this
file, in ``../lib`` (the build tree's ``python_packages`` and an install's
``lib/python``), and finally on the loader's search path. The CUDA driver is
``libcuda.so.1`` unless ``$NVFP4_CUDA_DRIVER`` names another library.
"""
import ctypes
import os

import numpy as np

__all__ = ["load", "describe_manifest", "Bundle", "Nvfp4RuntimeError",
           "NoDeviceError", "ManifestError", "CudaError", "library"]

# Status codes of nvfp4-c/Runtime.h.
_SUCCESS = 0
_INVALID_ARGUMENT = 1
_IO = 2
_INVALID_MANIFEST = 3
_NO_DEVICE = 4
_CUDA = 5
_OUT_OF_MEMORY = 6
_API_VERSION = 1

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
    }
    for name, (restype, argtypes) in signatures.items():
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
        handle = ctypes.c_void_p()
        _check(lib.nvfp4rtBundleLoad(os.fsencode(image_path),
                                     os.fsencode(manifest_path), int(device),
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
                array = np.asarray(value)
                if type_name == "bf16" and array.dtype == np.float32:
                    array = _bf16_bits(array)
                array = np.ascontiguousarray(array)
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
        times = (ctypes.c_float * int(repeat))()
        _check(lib.nvfp4rtSessionRun(session, int(repeat), int(warmup),
                                     times))
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

    def close(self):
        """Frees the device buffers and unloads the kernels."""
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


def _to_int64(value):
    """An int as the int64 the C API takes; values up to 2^64-1 are passed
    as their two's complement (a 64-bit seed, say)."""
    value = int(value)
    if not -(1 << 63) <= value < (1 << 64):
        raise ValueError(f"{value} does not fit in 64 bits")
    return value - (1 << 64) if value >= (1 << 63) else value
