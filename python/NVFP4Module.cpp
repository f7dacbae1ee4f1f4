//===- NVFP4Module.cpp - Python bindings of the numerics library ----------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The `nvfp4._nvfp4` extension: thin, validating wrappers around
// nvfp4::numerics. Every argument is taken as a plain Python object and
// checked here, so that any bad input (wrong dtype, shape, value or option)
// surfaces as a ValueError with a message, never as a crash or a pybind11
// overload-resolution TypeError. The public API lives in nvfp4/__init__.py.
//
// Tensors are numpy arrays; the last dimension is the contraction dimension
// and all leading dimensions fold into rows (C order).
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Numerics/Formats.h"
#include "nvfp4/Numerics/Gemm.h"
#include "nvfp4/Numerics/Hadamard.h"
#include "nvfp4/Numerics/MX.h"
#include "nvfp4/Numerics/Quantize.h"
#include "nvfp4/Numerics/ScaleLayout.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;
using namespace nvfp4::numerics;

namespace {

using Shape = std::vector<py::ssize_t>;

[[noreturn]] void fail(const std::string &Message) {
  throw py::value_error(Message);
}

/// Returns the value of `Result` or raises its message as a ValueError.
template <typename T> T unwrap(Expected<T> Result) {
  if (!Result.ok())
    fail(Result.message());
  return Result.take();
}

std::string reprOf(py::handle Object) {
  return py::repr(Object).cast<std::string>();
}

std::string shapeToString(const Shape &Dims) {
  std::string Text = "(";
  for (size_t I = 0; I < Dims.size(); ++I)
    Text += (I ? ", " : "") + std::to_string(Dims[I]);
  return Text + (Dims.size() == 1 ? ",)" : ")");
}

/// Product of the dimensions except the last (the folded row count).
int64_t leadingProduct(const Shape &Dims) {
  int64_t Rows = 1;
  for (size_t I = 0; I + 1 < Dims.size(); ++I)
    Rows *= Dims[I];
  return Rows;
}

/// Converts an integer-like object (int, numpy integer) to int64, or fails.
int64_t parseInteger(py::handle Object, const std::string &Name) {
  py::object Index =
      py::reinterpret_steal<py::object>(PyNumber_Index(Object.ptr()));
  if (!Index) {
    PyErr_Clear();
    fail(Name + " must be an integer, got " + reprOf(Object));
  }
  int Overflow = 0;
  long long Value = PyLong_AsLongLongAndOverflow(Index.ptr(), &Overflow);
  if (Overflow || (Value == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    fail(Name + " is out of range: " + reprOf(Object));
  }
  return Value;
}

/// Requires a numpy array of rank >= 1.
py::array requireArray(py::handle Object, const std::string &Name) {
  if (!py::isinstance<py::array>(Object))
    fail(Name + " must be a numpy array, got " +
         py::str(py::type::of(Object).attr("__name__")).cast<std::string>());
  py::array Array = py::reinterpret_borrow<py::array>(Object);
  if (Array.ndim() == 0)
    fail(Name + " must have at least one dimension, got a 0-d array");
  return Array;
}

Shape shapeOf(const py::array &Array) {
  return Shape(Array.shape(), Array.shape() + Array.ndim());
}

std::string dtypeName(const py::array &Array) {
  return py::str(Array.dtype()).cast<std::string>();
}

/// A C-contiguous copy (or view) of `Array` with elements of type T.
/// pybind11's ensure() returns a null array -- and clears the Python error
/// -- when the copy cannot be made (a broadcast view of a terabyte, for
/// one): raise MemoryError instead of dereferencing it.
template <typename T>
py::array_t<T, py::array::c_style | py::array::forcecast>
denseArray(const py::array &Array, const std::string &Name) {
  auto Dense =
      py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(Array);
  if (!Dense) {
    std::string Message =
        Name + ": cannot make a contiguous copy of the array (" +
        std::to_string(Array.size()) + " elements of " +
        std::to_string(Array.itemsize()) + " bytes): out of memory";
    PyErr_SetString(PyExc_MemoryError, Message.c_str());
    throw py::error_already_set();
  }
  return Dense;
}

/// Whether `Array` holds ml_dtypes.bfloat16 values (a 2-byte numpy dtype of
/// that name; ml_dtypes is optional and not imported here).
bool isBFloat16Array(const py::array &Array) {
  return Array.itemsize() == 2 &&
         py::str(Array.dtype().attr("name")).cast<std::string>() == "bfloat16";
}

/// The element types an input tensor may have, and how it was given.
enum class InputKind { Float32, Float16, BF16Bits, BFloat16 };

/// A high-precision tensor read as floats: FP32 values, float16 values (exact
/// in FP32), or BF16 given as uint16 bit patterns or ml_dtypes.bfloat16.
struct InputTensor {
  std::vector<float> Values;
  Shape Dims;
  InputKind Kind = InputKind::Float32;
};

/// Reads `Object` as an input tensor. With `RequireBF16`, the values must be
/// BF16 (the RHT is defined on BF16 only): float32 and float16 input must
/// hold BF16-representable values. Without it (quantize), float32 is FP32
/// input as nvfp4.quantize on tensor<...xf32> takes it: no rounding to BF16.
InputTensor readInputTensor(py::handle Object, const std::string &Name,
                            bool RequireBF16) {
  py::array Array = requireArray(Object, Name);
  InputTensor Tensor;
  Tensor.Dims = shapeOf(Array);
  Tensor.Values.resize(static_cast<size_t>(Array.size()));
  auto checkBF16 = [&] {
    if (!RequireBF16)
      return;
    for (size_t I = 0; I < Tensor.Values.size(); ++I)
      if (!isBF16Representable(Tensor.Values[I]))
        fail(Name + " element " + std::to_string(I) + " (flat index, value " +
             reprOf(py::float_(Tensor.Values[I])) +
             ") is not representable in bfloat16; round the input to "
             "bfloat16 or pass BF16 bit patterns as uint16");
  };
  if (py::isinstance<py::array_t<float>>(Array)) {
    auto Dense = denseArray<float>(Array, Name);
    std::copy(Dense.data(), Dense.data() + Dense.size(), Tensor.Values.begin());
    checkBF16();
    return Tensor;
  }
  if (Array.dtype().kind() == 'f' && Array.itemsize() == 2) {
    // float16 widens to float32 exactly (numpy's own conversion).
    py::array Wide = Array.attr("astype")("float32");
    auto Dense = denseArray<float>(Wide, Name);
    std::copy(Dense.data(), Dense.data() + Dense.size(), Tensor.Values.begin());
    Tensor.Kind = InputKind::Float16;
    checkBF16();
    return Tensor;
  }
  bool BFloat16 = isBFloat16Array(Array);
  if (BFloat16 || py::isinstance<py::array_t<uint16_t>>(Array)) {
    py::array Bits = BFloat16 ? py::array(Array.attr("view")("uint16")) : Array;
    auto Dense = denseArray<uint16_t>(Bits, Name);
    for (size_t I = 0; I < Tensor.Values.size(); ++I)
      Tensor.Values[I] = bf16ToFloat(Dense.data()[I]);
    Tensor.Kind = BFloat16 ? InputKind::BFloat16 : InputKind::BF16Bits;
    return Tensor;
  }
  fail(Name + " must have dtype float32" +
       (RequireBF16 ? " (BF16-representable values)" : "") +
       ", float16, ml_dtypes.bfloat16 or uint16 (BF16 bit patterns), got " +
       dtypeName(Array));
}

/// Reads a uint8 array (codes, scales) as a dense byte vector.
std::vector<uint8_t> readBytes(py::handle Object, const std::string &Name,
                               Shape &Dims) {
  py::array Array = requireArray(Object, Name);
  if (!py::isinstance<py::array_t<uint8_t>>(Array))
    fail(Name + " must have dtype uint8, got " + dtypeName(Array));
  auto Dense = denseArray<uint8_t>(Array, Name);
  Dims = shapeOf(Array);
  return std::vector<uint8_t>(Dense.data(), Dense.data() + Dense.size());
}

template <typename T>
py::array_t<T> makeArray(const Shape &Dims, const std::vector<T> &Data) {
  py::array_t<T> Array(Dims);
  std::memcpy(Array.mutable_data(), Data.data(), Data.size() * sizeof(T));
  return Array;
}

BlockShape parseBlock(py::handle Object) {
  std::string Message =
      "block must be (1, 16) or (16, 16), got " + reprOf(Object);
  if (py::isinstance<py::str>(Object) || py::isinstance<py::bytes>(Object) ||
      !py::isinstance<py::sequence>(Object))
    fail(Message);
  py::sequence Items = py::reinterpret_borrow<py::sequence>(Object);
  if (py::len(Items) != 2)
    fail(Message);
  int64_t First = parseInteger(Items[0], "block[0]");
  int64_t Second = parseInteger(Items[1], "block[1]");
  if (First == 1 && Second == 16)
    return BlockShape::Row1x16;
  if (First == 16 && Second == 16)
    return BlockShape::Tile16x16;
  fail(Message);
}

RoundingMode parseRounding(py::handle Object) {
  if (py::isinstance<py::str>(Object)) {
    std::string Mode = Object.cast<std::string>();
    if (Mode == "rn")
      return RoundingMode::NearestEven;
    if (Mode == "sr")
      return RoundingMode::Stochastic;
  }
  fail("rounding must be \"rn\" (round to nearest even) or \"sr\" "
       "(stochastic), got " +
       reprOf(Object));
}

uint64_t parseSeed(py::handle Object) {
  py::object Index =
      py::reinterpret_steal<py::object>(PyNumber_Index(Object.ptr()));
  if (!Index) {
    PyErr_Clear();
    fail("seed must be an integer, got " + reprOf(Object));
  }
  unsigned long long Value = PyLong_AsUnsignedLongLong(Index.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    fail("seed must be in [0, 2**64), got " + reprOf(Object));
  }
  return Value;
}

/// Parses a tensor amax: a real number >= 0 (Inf allowed), rounded to fp32.
float parseAmax(py::handle Object, const std::string &Name) {
  double Value = PyFloat_AsDouble(Object.ptr());
  if (Value == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    fail(Name + " must be a real number, got " + reprOf(Object));
  }
  float Amax = static_cast<float>(Value);
  if (std::isnan(Amax) || Amax < 0.0f)
    fail(Name + " must be non-negative and not NaN, got " + reprOf(Object));
  return Amax;
}

/// Parses an optional decode scale (a checkpoint's weight_scale_2): None, or
/// a finite real number >= 0, rounded to fp32 (exact for an fp32 value).
std::optional<float> parseDecodeScale(py::handle Object,
                                      const std::string &Name) {
  if (Object.is_none())
    return std::nullopt;
  double Value = PyFloat_AsDouble(Object.ptr());
  if (Value == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    fail(Name + " must be a real number or None, got " + reprOf(Object));
  }
  float Scale = static_cast<float>(Value);
  if (!std::isfinite(Scale) || Scale < 0.0f)
    fail(Name + " must be non-negative and finite, got " + reprOf(Object));
  return Scale;
}

/// Checks that a tensor shape can be quantized with `Block` blocks. Leading
/// dimensions fold into rows, so 16x16 tiles need the second-to-last
/// dimension itself to be a multiple of 16 (tiles must not straddle batches).
void validateTensorShape(const Shape &Dims, BlockShape Block,
                         const std::string &Name) {
  for (py::ssize_t Dim : Dims)
    if (Dim == 0)
      fail(Name + " must be non-empty, got shape " + shapeToString(Dims));
  if (Dims.back() % kBlockSize != 0)
    fail(Name + ": the last dimension (" + std::to_string(Dims.back()) +
         ") must be a multiple of 16, got shape " + shapeToString(Dims));
  if (Block == BlockShape::Tile16x16) {
    if (Dims.size() < 2)
      fail(Name + ": 16x16 blocks need at least 2 dimensions, got shape " +
           shapeToString(Dims));
    if (Dims[Dims.size() - 2] % kBlockSize != 0)
      fail(Name + ": 16x16 blocks need the second-to-last dimension (" +
           std::to_string(Dims[Dims.size() - 2]) +
           ") to be a multiple of 16, got shape " + shapeToString(Dims));
  }
}

/// The linear scale shape of a tensor of shape `Dims`.
Shape scaleShapeOf(const Shape &Dims, BlockShape Block) {
  Shape Scales = Dims;
  Scales.back() /= kBlockSize;
  if (Block == BlockShape::Tile16x16)
    Scales[Scales.size() - 2] /= kBlockSize;
  return Scales;
}

/// Builds and validates a QuantizedTensor from its Python parts.
QuantizedTensor readQuantized(py::handle Codes, py::handle Scales,
                              py::handle Amax, py::handle Block,
                              const std::string &Name, Shape &Dims,
                              py::handle DecodeScale = py::none()) {
  QuantizedTensor Tensor;
  Tensor.Block = parseBlock(Block);
  Tensor.Codes = readBytes(Codes, Name + ".codes", Dims);
  validateTensorShape(Dims, Tensor.Block, Name + ".codes");
  Shape ScaleDims;
  Tensor.Scales = readBytes(Scales, Name + ".scales", ScaleDims);
  Shape WantScales = scaleShapeOf(Dims, Tensor.Block);
  if (ScaleDims != WantScales)
    fail(Name + ".scales has shape " + shapeToString(ScaleDims) +
         " but codes of shape " + shapeToString(Dims) +
         " with these blocks need " + shapeToString(WantScales));
  // An E4M3 block scale is a magnitude: no sign bit, and never NaN
  // (S.1111.111); the IR's nvfp4.pack rejects the same constants (pack_c4).
  for (size_t I = 0; I < Tensor.Scales.size(); ++I) {
    uint8_t Bits = Tensor.Scales[I];
    if ((Bits & 0x80) || (Bits & 0x7F) == 0x7F) {
      char Hex[8];
      std::snprintf(Hex, sizeof(Hex), "0x%02X", Bits);
      fail(Name + ".scales element " + std::to_string(I) +
           " (flat index) is " + Hex +
           ": block scales must be non-negative and not NaN (E4M3 bits "
           "0x00-0x7E)");
    }
  }
  Tensor.DecodeScale = parseDecodeScale(DecodeScale, Name + ".decode_scale");
  // A tensor with a decode scale needs no amax (and has none from a
  // checkpoint).
  Tensor.Amax = Tensor.DecodeScale && Amax.is_none()
                    ? 0.0f
                    : parseAmax(Amax, Name + ".amax");
  Tensor.Rows = leadingProduct(Dims);
  Tensor.Cols = Dims.back();
  if (Status S = validateQuantizedTensor(Tensor); !S.ok())
    fail(Name + ": " + S.message());
  return Tensor;
}

py::tuple quantizeTensor(py::handle X, py::handle Block, py::handle Rounding,
                         py::handle Seed, py::handle Amax) {
  QuantizeOptions Options;
  Options.Block = parseBlock(Block);
  Options.Rounding = parseRounding(Rounding);
  Options.Seed = parseSeed(Seed);
  if (!Amax.is_none())
    Options.Amax = parseAmax(Amax, "amax");
  InputTensor Input = readInputTensor(X, "x", /*RequireBF16=*/false);
  validateTensorShape(Input.Dims, Options.Block, "x");
  QuantizedTensor Q =
      unwrap(quantize(Input.Values.data(), Input.Values.size(),
                      leadingProduct(Input.Dims), Input.Dims.back(), Options));
  return py::make_tuple(
      makeArray(Input.Dims, Q.Codes),
      makeArray(scaleShapeOf(Input.Dims, Options.Block), Q.Scales),
      static_cast<double>(Q.Amax));
}

void checkParts(py::handle Codes, py::handle Scales, py::handle Amax,
                py::handle Block, py::handle DecodeScale) {
  Shape Dims;
  readQuantized(Codes, Scales, Amax, Block, "tensor", Dims, DecodeScale);
}

py::array_t<float> dequantizeTensor(py::handle Codes, py::handle Scales,
                                    py::handle Amax, py::handle Block,
                                    py::handle DecodeScale) {
  Shape Dims;
  QuantizedTensor Tensor = readQuantized(Codes, Scales, Amax, Block, "tensor",
                                         Dims, DecodeScale);
  return makeArray(Dims, unwrap(dequantize(Tensor)));
}

py::array_t<uint8_t> packCodes(py::handle Codes) {
  Shape Dims;
  std::vector<uint8_t> Bytes = readBytes(Codes, "codes", Dims);
  if (Dims.back() % 2 != 0)
    fail("codes: the last dimension (" + std::to_string(Dims.back()) +
         ") must be even to pack two codes per byte");
  for (uint8_t Code : Bytes)
    if (Code > 0xF)
      fail("codes must be 4-bit values (0..15), found " + std::to_string(Code));
  Dims.back() /= 2;
  return makeArray(Dims, unwrap(packNibbles(Bytes.data(), Bytes.size())));
}

py::array_t<uint8_t> unpackCodes(py::handle Packed) {
  Shape Dims;
  std::vector<uint8_t> Bytes = readBytes(Packed, "packed", Dims);
  Dims.back() *= 2;
  return makeArray(Dims, unpackNibbles(Bytes.data(), Bytes.size()));
}

py::array hadamardTensor(py::handle X, py::handle SignMask) {
  int64_t Mask = parseInteger(SignMask, "sign_mask");
  if (Mask < 0 || Mask > 0xFFFF)
    fail("sign_mask must be a 16-bit mask in [0, 0xFFFF], got " +
         reprOf(SignMask));
  InputTensor Input = readInputTensor(X, "x", /*RequireBF16=*/true);
  validateTensorShape(Input.Dims, BlockShape::Row1x16, "x");
  std::vector<float> Result = unwrap(hadamardTransform(
      Input.Values.data(), Input.Values.size(), static_cast<uint16_t>(Mask)));
  // Float input gives float32 (every BF16 value is one); bit patterns give
  // bit patterns of the same dtype.
  if (Input.Kind == InputKind::Float32 || Input.Kind == InputKind::Float16)
    return makeArray(Input.Dims, Result);
  std::vector<uint16_t> Bits(Result.size());
  for (size_t I = 0; I < Result.size(); ++I)
    Bits[I] = floatToBF16(Result[I]);
  py::array Out = makeArray(Input.Dims, Bits);
  if (Input.Kind == InputKind::BFloat16)
    return py::reinterpret_borrow<py::array>(
        Out.attr("view")(py::reinterpret_borrow<py::array>(X).dtype()));
  return Out;
}

py::array_t<uint8_t> swizzleScaleMatrix(py::handle Scales) {
  Shape Dims;
  std::vector<uint8_t> Bytes = readBytes(Scales, "scales", Dims);
  if (Dims.size() != 2)
    fail("scales must be a 2-D (rows, scale_cols) array, got shape " +
         shapeToString(Dims) + "; reshape batched scales first");
  std::vector<uint8_t> Result =
      unwrap(swizzleScales(Bytes.data(), Bytes.size(), Dims[0], Dims[1]));
  return makeArray(Shape{static_cast<py::ssize_t>(Result.size())}, Result);
}

py::array_t<uint8_t> unswizzleScaleMatrix(py::handle Swizzled, py::handle Rows,
                                          py::handle Cols) {
  Shape Dims;
  std::vector<uint8_t> Bytes = readBytes(Swizzled, "swizzled", Dims);
  if (Dims.size() != 1)
    fail("swizzled must be a 1-D array, got shape " + shapeToString(Dims));
  int64_t RowCount = parseInteger(Rows, "rows");
  int64_t ColCount = parseInteger(Cols, "cols");
  std::vector<uint8_t> Result =
      unwrap(unswizzleScales(Bytes.data(), Bytes.size(), RowCount, ColCount));
  return makeArray(Shape{RowCount, ColCount}, Result);
}

py::array_t<float> scaledMatmulTensors(py::handle CodesA, py::handle ScalesA,
                                       py::handle AmaxA, py::handle BlockA,
                                       py::handle CodesB, py::handle ScalesB,
                                       py::handle AmaxB, py::handle BlockB,
                                       py::handle Alpha,
                                       py::handle DecodeScaleA,
                                       py::handle DecodeScaleB) {
  Shape DimsA, DimsB;
  QuantizedTensor A = readQuantized(CodesA, ScalesA, AmaxA, BlockA, "a", DimsA,
                                    DecodeScaleA);
  QuantizedTensor B = readQuantized(CodesB, ScalesB, AmaxB, BlockB, "b", DimsB,
                                    DecodeScaleB);
  if (DimsA.size() != 2 || DimsB.size() != 2)
    fail("scaled_matmul needs 2-D operands a (M, K) and b (N, K), got " +
         shapeToString(DimsA) + " and " + shapeToString(DimsB));
  double AlphaValue = PyFloat_AsDouble(Alpha.ptr());
  if (AlphaValue == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    fail("alpha must be a real number, got " + reprOf(Alpha));
  }
  std::vector<float> Result =
      unwrap(scaledMatmul(A, B, static_cast<float>(AlphaValue)));
  return makeArray(Shape{DimsA[0], DimsB[0]}, Result);
}

//===----------------------------------------------------------------------===//
// MX formats (docs/Numerics.md section 11): 1x32 blocks, E8M0 scales, no
// tensor amax.
//===----------------------------------------------------------------------===//

MXFormat parseMXFormatName(py::handle Object) {
  if (py::isinstance<py::str>(Object))
    if (std::optional<MXFormat> Format =
            parseMXFormat(Object.cast<std::string>()))
      return *Format;
  fail("format must be \"nvfp4\", \"mxfp4\", \"mxfp8_e4m3\" or "
       "\"mxfp8_e5m2\", got " +
       reprOf(Object));
}

void validateMXTensorShape(const Shape &Dims, const std::string &Name) {
  for (py::ssize_t Dim : Dims)
    if (Dim == 0)
      fail(Name + " must be non-empty, got shape " + shapeToString(Dims));
  if (Dims.back() % kMXBlockSize != 0)
    fail(Name + ": the last dimension (" + std::to_string(Dims.back()) +
         ") must be a multiple of 32 for the MX formats' 1x32 blocks, got "
         "shape " +
         shapeToString(Dims));
}

Shape mxScaleShapeOf(const Shape &Dims) {
  Shape Scales = Dims;
  Scales.back() /= kMXBlockSize;
  return Scales;
}

/// Builds and validates an MXTensor from its Python parts.
MXTensor readMX(py::handle Codes, py::handle Scales, py::handle Format,
                const std::string &Name, Shape &Dims) {
  MXTensor Tensor;
  Tensor.Format = parseMXFormatName(Format);
  Tensor.Codes = readBytes(Codes, Name + ".codes", Dims);
  validateMXTensorShape(Dims, Name + ".codes");
  Shape ScaleDims;
  Tensor.Scales = readBytes(Scales, Name + ".scales", ScaleDims);
  Shape WantScales = mxScaleShapeOf(Dims);
  if (ScaleDims != WantScales)
    fail(Name + ".scales has shape " + shapeToString(ScaleDims) +
         " but codes of shape " + shapeToString(Dims) + " need " +
         shapeToString(WantScales) + " (one E8M0 scale per 32 elements)");
  // 0xFF is E8M0's NaN; the IR's nvfp4.pack rejects the same constants.
  for (size_t I = 0; I < Tensor.Scales.size(); ++I)
    if (Tensor.Scales[I] == kE8M0NaNCode)
      fail(Name + ".scales element " + std::to_string(I) +
           " (flat index) is 0xFF: E8M0 scales must not be NaN (bits "
           "0x00-0xFE)");
  Tensor.Rows = leadingProduct(Dims);
  Tensor.Cols = Dims.back();
  if (Status S = validateMXTensor(Tensor); !S.ok())
    fail(Name + ": " + S.message());
  return Tensor;
}

py::tuple quantizeMXTensor(py::handle X, py::handle Format) {
  MXFormat Parsed = parseMXFormatName(Format);
  InputTensor Input = readInputTensor(X, "x", /*RequireBF16=*/false);
  validateMXTensorShape(Input.Dims, "x");
  MXTensor Q = unwrap(quantizeMX(Input.Values.data(), Input.Values.size(),
                                 leadingProduct(Input.Dims), Input.Dims.back(),
                                 Parsed));
  return py::make_tuple(makeArray(Input.Dims, Q.Codes),
                        makeArray(mxScaleShapeOf(Input.Dims), Q.Scales));
}

void checkMXParts(py::handle Codes, py::handle Scales, py::handle Format) {
  Shape Dims;
  readMX(Codes, Scales, Format, "tensor", Dims);
}

py::array_t<float> dequantizeMXTensor(py::handle Codes, py::handle Scales,
                                      py::handle Format) {
  Shape Dims;
  MXTensor Tensor = readMX(Codes, Scales, Format, "tensor", Dims);
  return makeArray(Dims, unwrap(dequantizeMX(Tensor)));
}

py::array_t<float> scaledMatmulMXTensors(py::handle CodesA, py::handle ScalesA,
                                         py::handle FormatA, py::handle CodesB,
                                         py::handle ScalesB, py::handle FormatB,
                                         py::handle Alpha) {
  Shape DimsA, DimsB;
  MXTensor A = readMX(CodesA, ScalesA, FormatA, "a", DimsA);
  MXTensor B = readMX(CodesB, ScalesB, FormatB, "b", DimsB);
  if (DimsA.size() != 2 || DimsB.size() != 2)
    fail("scaled_matmul needs 2-D operands a (M, K) and b (N, K), got " +
         shapeToString(DimsA) + " and " + shapeToString(DimsB));
  double AlphaValue = PyFloat_AsDouble(Alpha.ptr());
  if (AlphaValue == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    fail("alpha must be a real number, got " + reprOf(Alpha));
  }
  std::vector<float> Result =
      unwrap(scaledMatmulMX(A, B, static_cast<float>(AlphaValue)));
  return makeArray(Shape{DimsA[0], DimsB[0]}, Result);
}

} // namespace

PYBIND11_MODULE(_nvfp4, Module) {
  Module.doc() = "Bit-exact NVFP4 reference numerics (see nvfp4/__init__.py)";
  Module.attr("DEFAULT_SIGN_MASK") = kDefaultHadamardSignMask;
  Module.attr("__version__") = NVFP4_VERSION;
  Module.def("quantize", &quantizeTensor, py::arg("x"), py::arg("block"),
             py::arg("rounding"), py::arg("seed"), py::arg("amax"),
             "Quantize; returns (codes, scales, amax).");
  Module.def("quantize_mx", &quantizeMXTensor, py::arg("x"),
             py::arg("format"), "MX quantize; returns (codes, scales).");
  Module.def("check_mx_parts", &checkMXParts, py::arg("codes"),
             py::arg("scales"), py::arg("format"));
  Module.def("dequantize_mx", &dequantizeMXTensor, py::arg("codes"),
             py::arg("scales"), py::arg("format"));
  Module.def("scaled_matmul_mx", &scaledMatmulMXTensors, py::arg("a_codes"),
             py::arg("a_scales"), py::arg("a_format"), py::arg("b_codes"),
             py::arg("b_scales"), py::arg("b_format"), py::arg("alpha"));
  Module.def("check_parts", &checkParts, py::arg("codes"), py::arg("scales"),
             py::arg("amax"), py::arg("block"),
             py::arg("decode_scale") = py::none(),
             "Raise ValueError unless the parts form a valid NVFP4 tensor.");
  Module.def("dequantize", &dequantizeTensor, py::arg("codes"),
             py::arg("scales"), py::arg("amax"), py::arg("block"),
             py::arg("decode_scale") = py::none());
  Module.def("pack", &packCodes, py::arg("codes"));
  Module.def("unpack", &unpackCodes, py::arg("packed"));
  Module.def("hadamard", &hadamardTensor, py::arg("x"), py::arg("sign_mask"));
  Module.def("swizzle_scales", &swizzleScaleMatrix, py::arg("scales"));
  Module.def(
      "block_rows",
      [](py::handle Block) { return blockRows(parseBlock(Block)); },
      py::arg("block"), "Rows a block covers: 1 for (1, 16), 16 for (16, 16).");
  Module.def("unswizzle_scales", &unswizzleScaleMatrix, py::arg("swizzled"),
             py::arg("rows"), py::arg("cols"));
  Module.def("scaled_matmul", &scaledMatmulTensors, py::arg("a_codes"),
             py::arg("a_scales"), py::arg("a_amax"), py::arg("a_block"),
             py::arg("b_codes"), py::arg("b_scales"), py::arg("b_amax"),
             py::arg("b_block"), py::arg("alpha"),
             py::arg("a_decode_scale") = py::none(),
             py::arg("b_decode_scale") = py::none());
}
