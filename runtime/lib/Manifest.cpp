//===- Manifest.cpp - The kernel manifest nvfp4-compile --report writes ---===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The manifest is the JSON object lib/Compiler/Compiler.cpp's
// renderKernelReport writes. Only "buffers" and "kernels" matter here
// ("function" and "chip" are used in messages and for the device check);
// everything else (precision report, ptxas statistics) is ignored. Every
// index is checked, so that a Session never looks outside an array.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>

using namespace nvfp4::runtime;
namespace json = llvm::json;

//===----------------------------------------------------------------------===//
// Types and values
//===----------------------------------------------------------------------===//

std::optional<ScalarType> nvfp4::runtime::parseScalarType(std::string_view n) {
  return llvm::StringSwitch<std::optional<ScalarType>>(
             llvm::StringRef(n.data(), n.size()))
      .Case("i1", ScalarType::I1)
      .Case("i8", ScalarType::I8)
      .Case("i16", ScalarType::I16)
      .Case("i32", ScalarType::I32)
      .Case("i64", ScalarType::I64)
      .Case("index", ScalarType::Index)
      .Case("f16", ScalarType::F16)
      .Case("bf16", ScalarType::BF16)
      .Case("f32", ScalarType::F32)
      .Case("f64", ScalarType::F64)
      .Case("f8E4M3FN", ScalarType::F8E4M3FN)
      .Case("f8E5M2", ScalarType::F8E5M2)
      .Default(std::nullopt);
}

const char *nvfp4::runtime::scalarTypeName(ScalarType type) {
  switch (type) {
  case ScalarType::I1:
    return "i1";
  case ScalarType::I8:
    return "i8";
  case ScalarType::I16:
    return "i16";
  case ScalarType::I32:
    return "i32";
  case ScalarType::I64:
    return "i64";
  case ScalarType::Index:
    return "index";
  case ScalarType::F16:
    return "f16";
  case ScalarType::BF16:
    return "bf16";
  case ScalarType::F32:
    return "f32";
  case ScalarType::F64:
    return "f64";
  case ScalarType::F8E4M3FN:
    return "f8E4M3FN";
  case ScalarType::F8E5M2:
    return "f8E5M2";
  }
  return "?";
}

size_t nvfp4::runtime::scalarTypeSize(ScalarType type) {
  switch (type) {
  case ScalarType::I1:
  case ScalarType::I8:
  case ScalarType::F8E4M3FN:
  case ScalarType::F8E5M2:
    return 1;
  case ScalarType::I16:
  case ScalarType::F16:
  case ScalarType::BF16:
    return 2;
  case ScalarType::I32:
  case ScalarType::F32:
    return 4;
  case ScalarType::I64:
  case ScalarType::Index:
  case ScalarType::F64:
    return 8;
  }
  return 1;
}

bool nvfp4::runtime::isFloatType(ScalarType type) {
  switch (type) {
  case ScalarType::F16:
  case ScalarType::BF16:
  case ScalarType::F32:
  case ScalarType::F64:
  case ScalarType::F8E4M3FN:
  case ScalarType::F8E5M2:
    return true;
  default:
    return false;
  }
}

bool detail::isSupportedScalarParamType(ScalarType type) {
  return !isFloatType(type) || type == ScalarType::F32 ||
         type == ScalarType::F64;
}

Expected<ScalarValue> nvfp4::runtime::parseScalarValue(ScalarType type,
                                                       std::string_view text) {
  std::string s(text);
  auto bad = [&](const char *what) {
    return Status::error(ErrorCode::InvalidArgument,
                         "'" + s + "' is not " + what + " (for " +
                             scalarTypeName(type) + ")");
  };
  if (s.empty())
    return bad("a number");
  if (!isFloatType(type)) {
    // Decimal, or 0x hex; negative values and, for 64-bit types, unsigned
    // values up to 2^64-1 (reinterpreted as two's complement).
    const char *begin = s.c_str();
    char *end = nullptr;
    errno = 0;
    long long signedValue = std::strtoll(begin, &end, 0);
    if (errno == 0 && end && *end == '\0')
      return ScalarValue::ofInt(signedValue);
    if (s[0] != '-') {
      errno = 0;
      unsigned long long unsignedValue = std::strtoull(begin, &end, 0);
      if (errno == 0 && end && *end == '\0')
        return ScalarValue::ofInt(static_cast<int64_t>(unsignedValue));
    }
    // The manifest's constants went through a double on the Python side
    // ("1.000000e+00"): accept integral floating-point spellings.
    errno = 0;
    double d = std::strtod(begin, &end);
    if (end && *end == '\0' && std::isfinite(d) && std::trunc(d) == d &&
        std::fabs(d) < 9.2e18)
      return ScalarValue::ofInt(static_cast<int64_t>(d));
    return bad("an integer");
  }
  char *end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (!end || *end != '\0')
    return bad("a number");
  return ScalarValue::ofFloat(d);
}

Expected<uint64_t> detail::encodeScalar(ScalarType type,
                                        const ScalarValue &value) {
  if (isFloatType(type)) {
    double d =
        value.isFloat ? value.floatValue : static_cast<double>(value.intValue);
    if (type == ScalarType::F32) {
      float f = static_cast<float>(d);
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof(bits));
      return static_cast<uint64_t>(bits);
    }
    if (type == ScalarType::F64) {
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof(bits));
      return bits;
    }
    return Status::error(ErrorCode::InvalidArgument,
                         std::string("scalar values of type ") +
                             scalarTypeName(type) + " are not supported");
  }
  int64_t i = value.intValue;
  if (value.isFloat) {
    double d = value.floatValue;
    if (!std::isfinite(d) || std::trunc(d) != d || std::fabs(d) >= 9.2e18)
      return Status::error(ErrorCode::InvalidArgument,
                           llvm::formatv("{0} is not an integer (for {1})", d,
                                         scalarTypeName(type))
                               .str());
    i = static_cast<int64_t>(d);
  }
  uint64_t bits = static_cast<uint64_t>(i);
  switch (scalarTypeSize(type)) {
  case 1:
    return type == ScalarType::I1 ? (bits & 1) : (bits & 0xFF);
  case 2:
    return bits & 0xFFFF;
  case 4:
    return bits & 0xFFFFFFFFu;
  default:
    return bits;
  }
}

Expected<uint64_t> detail::scalarParamBits(const ParamSpec &param,
                                           const ScalarValue *argumentValue) {
  if (param.argument < 0)
    return encodeScalar(param.type, *param.value);
  if (!argumentValue)
    return Status::error(ErrorCode::InvalidArgument,
                         llvm::formatv("argument {0} was not given",
                                       param.argument)
                             .str());
  if (!param.seedStream)
    return encodeScalar(param.type, *argumentValue);
  Expected<uint64_t> base = encodeScalar(ScalarType::I64, *argumentValue);
  if (!base.ok())
    return base;
  return deriveStreamSeed(*base, *param.seedStream);
}

Expected<std::optional<uint64_t>>
detail::bufferFillBits(const Manifest &m, const BufferSpec &b,
                       const ScalarValue *fillValue) {
  if (b.fillBits)
    return std::optional<uint64_t>(*b.fillBits);
  if (b.fillFromArgument < 0)
    return std::optional<uint64_t>();
  if (!fillValue)
    return Status::error(ErrorCode::InvalidArgument,
                         llvm::formatv("argument {0} was not given",
                                       b.fillFromArgument)
                             .str());
  Expected<uint64_t> bits =
      encodeScalar(m.arguments()[b.fillFromArgument].type, *fillValue);
  if (!bits.ok())
    return Status::error(ErrorCode::InvalidArgument,
                         llvm::formatv("argument {0}: {1}", b.fillFromArgument,
                                       bits.message())
                             .str());
  return std::optional<uint64_t>(*bits);
}

//===----------------------------------------------------------------------===//
// Tensor maps
//===----------------------------------------------------------------------===//

const char *nvfp4::runtime::tensorMapSwizzleName(TensorMapSwizzle swizzle) {
  switch (swizzle) {
  case TensorMapSwizzle::None:
    return "none";
  case TensorMapSwizzle::B32:
    return "32B";
  case TensorMapSwizzle::B64:
    return "64B";
  case TensorMapSwizzle::B128:
    return "128B";
  }
  return "?";
}

const char *
nvfp4::runtime::tensorMapL2PromotionName(TensorMapL2Promotion promotion) {
  switch (promotion) {
  case TensorMapL2Promotion::None:
    return "none";
  case TensorMapL2Promotion::B64:
    return "64B";
  case TensorMapL2Promotion::B128:
    return "128B";
  case TensorMapL2Promotion::B256:
    return "256B";
  }
  return "?";
}

const char *nvfp4::runtime::tensorMapOobFillName(TensorMapOobFill fill) {
  switch (fill) {
  case TensorMapOobFill::Zero:
    return "zero";
  case TensorMapOobFill::NanRequestZeroFma:
    return "nan";
  }
  return "?";
}

namespace {

// CUtensorMapDataType values (cuda.h; Runtime.cpp checks them).
constexpr int kTmUint8 = 0, kTmUint16 = 1, kTmInt32 = 3, kTmInt64 = 5,
              kTmFloat16 = 6, kTmFloat32 = 7, kTmFloat64 = 8,
              kTmBfloat16 = 9;

/// The CUtensorMapDataType of a tensor map's element type; -1 if TMA cannot
/// copy it. The 8-bit floats are copied as bytes.
int tensorMapDataType(ScalarType type) {
  switch (type) {
  case ScalarType::I8:
  case ScalarType::F8E4M3FN:
  case ScalarType::F8E5M2:
    return kTmUint8;
  case ScalarType::I16:
    return kTmUint16;
  case ScalarType::F16:
    return kTmFloat16;
  case ScalarType::BF16:
    return kTmBfloat16;
  case ScalarType::I32:
    return kTmInt32;
  case ScalarType::F32:
    return kTmFloat32;
  case ScalarType::I64:
    return kTmInt64;
  case ScalarType::F64:
    return kTmFloat64;
  case ScalarType::I1:
  case ScalarType::Index:
    return -1;
  }
  return -1;
}

std::string joinDims(const std::vector<int64_t> &dims,
                     const char *separator = "x") {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? separator : "") + std::to_string(dims[i]);
  return text;
}

} // namespace

std::string detail::describeTensorMap(const TensorMapSpec &tm) {
  return "tensormap buffer " + std::to_string(tm.buffer) + " [" +
         joinDims(tm.dims) + " " + scalarTypeName(tm.elementType) + ", box " +
         joinDims(tm.box) + ", swizzle " + tensorMapSwizzleName(tm.swizzle) +
         ", l2 " + tensorMapL2PromotionName(tm.l2Promotion) + ", oob " +
         tensorMapOobFillName(tm.oobFill) + "]";
}

std::string detail::describeTensorMapEncoding(const TensorMapEncoding &e) {
  static const char *const dataTypes[] = {"UINT8",   "UINT16",  "UINT32",
                                          "INT32",   "UINT64",  "INT64",
                                          "FLOAT16", "FLOAT32", "FLOAT64",
                                          "BFLOAT16"};
  static const char *const swizzles[] = {"SWIZZLE_NONE", "SWIZZLE_32B",
                                         "SWIZZLE_64B", "SWIZZLE_128B"};
  static const char *const promotions[] = {
      "L2_PROMOTION_NONE", "L2_PROMOTION_L2_64B", "L2_PROMOTION_L2_128B",
      "L2_PROMOTION_L2_256B"};
  static const char *const fills[] = {"FLOAT_OOB_FILL_NONE",
                                      "FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA"};
  auto name = [](const auto &names, int value) -> std::string {
    if (value >= 0 && size_t(value) < std::size(names))
      return names[value];
    return std::to_string(value);
  };
  auto list = [](const auto *values, size_t n) {
    std::string text = "[";
    for (size_t i = 0; i < n; ++i)
      text += (i ? ", " : "") + std::to_string(values[i]);
    return text + "]";
  };
  return "cuTensorMapEncodeTiled(" + name(dataTypes, e.dataType) + ", rank " +
         std::to_string(e.rank) + ", globalDim " +
         list(e.globalDim, e.rank) + ", globalStrides " +
         list(e.globalStrides, e.rank ? e.rank - 1 : 0) + ", boxDim " +
         list(e.boxDim, e.rank) + ", elementStrides " +
         list(e.elementStrides, e.rank) + ", " +
         (e.interleave == 0 ? std::string("INTERLEAVE_NONE")
                            : std::to_string(e.interleave)) +
         ", " + name(swizzles, e.swizzle) + ", " +
         name(promotions, e.l2Promotion) + ", " + name(fills, e.oobFill) + ")";
}

uint64_t nvfp4::runtime::tensorMapSpanBytes(const TensorMapEncoding &e) {
  // CUtensorMapDataType -> bytes (cuda.h: UINT8, UINT16, UINT32, INT32,
  // UINT64, INT64, FLOAT16, FLOAT32, FLOAT64, BFLOAT16).
  static constexpr uint64_t kBytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2};
  uint64_t element =
      e.dataType >= 0 && e.dataType < 10 ? kBytes[e.dataType] : 1;
  if (e.rank == 0)
    return 0;
  uint64_t span = element + (e.globalDim[0] - 1) * element;
  for (uint32_t i = 1; i < e.rank; ++i)
    span += (e.globalDim[i] - 1) * e.globalStrides[i - 1];
  return span;
}

bool nvfp4::runtime::applySmallTensorMapWorkaround(
    void *tensorMap, const TensorMapEncoding &encoding, int driverVersion) {
  if (driverVersion <= 0 || driverVersion > 13010 ||
      tensorMapSpanBytes(encoding) >= 131072)
    return false;
  uint64_t word;
  auto *bytes = static_cast<unsigned char *>(tensorMap);
  std::memcpy(&word, bytes + 8, sizeof(word));
  word &= ~(uint64_t(1) << 21);
  std::memcpy(bytes + 8, &word, sizeof(word));
  return true;
}

Expected<TensorMapEncoding>
nvfp4::runtime::computeTensorMapEncoding(const TensorMapSpec &spec) {
  auto bad = [](const std::string &message) {
    return Status::error(ErrorCode::InvalidManifest, message);
  };
  TensorMapEncoding e;
  e.dataType = tensorMapDataType(spec.elementType);
  if (e.dataType < 0)
    return bad(std::string("tensor maps of ") +
               scalarTypeName(spec.elementType) + " elements are not supported");
  size_t rank = spec.dims.size();
  if (rank < 1 || rank > TensorMapEncoding::kMaxRank)
    return bad(llvm::formatv("\"dims\" has {0} entries; a tensor map has 1 "
                             "to {1} dimensions",
                             rank, TensorMapEncoding::kMaxRank)
                   .str());
  if (spec.box.size() != rank)
    return bad(llvm::formatv("\"box\" has {0} entries, \"dims\" {1}",
                             spec.box.size(), rank)
                   .str());
  e.rank = static_cast<uint32_t>(rank);
  uint64_t elementBytes = scalarTypeSize(spec.elementType);
  // cuda.h's order is innermost first: entry i is dims[rank - 1 - i].
  for (size_t i = 0; i < rank; ++i) {
    int64_t dim = spec.dims[rank - 1 - i];
    int64_t box = spec.box[rank - 1 - i];
    if (dim < 1 || dim > (int64_t(1) << 32))
      return bad(llvm::formatv("dims[{0}] = {1} is not in [1, 2^32]",
                               rank - 1 - i, dim)
                     .str());
    if (box < 1 || box > 256)
      return bad(llvm::formatv("box[{0}] = {1} is not in [1, 256]",
                               rank - 1 - i, box)
                     .str());
    e.globalDim[i] = static_cast<uint64_t>(dim);
    e.boxDim[i] = static_cast<uint32_t>(box);
    e.elementStrides[i] = 1;
  }
  // globalStrides[i]: bytes between consecutive indices of cuda.h dimension
  // i + 1 (dense, row-major).
  constexpr uint64_t kStrideLimit = uint64_t(1) << 40;
  uint64_t stride = elementBytes;
  for (size_t i = 0; i + 1 < rank; ++i) {
    // stride < 2^40 and globalDim <= 2^32: test before multiplying.
    if (e.globalDim[i] >= (kStrideLimit + stride - 1) / stride)
      return bad(llvm::formatv("the byte stride of dims[{0}] is 2^40 or "
                               "more; TMA needs less",
                               rank - 2 - i)
                     .str());
    stride *= e.globalDim[i];
    if (stride % 16 != 0)
      return bad(llvm::formatv("the byte stride of dims[{0}] is {1}; TMA "
                               "needs a multiple of 16",
                               rank - 2 - i, stride)
                     .str());
    e.globalStrides[i] = stride;
  }
  uint64_t innerBoxBytes = e.boxDim[0] * elementBytes;
  if (innerBoxBytes % 16 != 0)
    return bad(llvm::formatv("the inner box dimension box[{0}] = {1} is {2} "
                             "bytes; TMA needs a multiple of 16",
                             rank - 1, e.boxDim[0], innerBoxBytes)
                   .str());
  uint64_t span = spec.swizzle == TensorMapSwizzle::B32    ? 32
                  : spec.swizzle == TensorMapSwizzle::B64  ? 64
                  : spec.swizzle == TensorMapSwizzle::B128 ? 128
                                                           : 0;
  if (span && innerBoxBytes > span)
    return bad(llvm::formatv("the inner box dimension box[{0}] = {1} is {2} "
                             "bytes, more than the {3} swizzle span",
                             rank - 1, e.boxDim[0], innerBoxBytes,
                             tensorMapSwizzleName(spec.swizzle))
                   .str());
  bool isFloat = e.dataType == kTmFloat16 || e.dataType == kTmFloat32 ||
                 e.dataType == kTmFloat64 || e.dataType == kTmBfloat16;
  if (spec.oobFill == TensorMapOobFill::NanRequestZeroFma && !isFloat)
    return bad(std::string("oob_fill \"nan\" needs a floating-point element "
                           "type, not ") +
               scalarTypeName(spec.elementType));
  e.interleave = 0;
  e.swizzle = static_cast<int>(spec.swizzle);
  e.l2Promotion = static_cast<int>(spec.l2Promotion);
  e.oobFill = static_cast<int>(spec.oobFill);
  return e;
}

uint64_t nvfp4::runtime::deriveStreamSeed(uint64_t seed,
                                          uint64_t streamIndex) {
  // SplitMix64 (Steele, Lea, Flood 2014): output streamIndex + 1 of the
  // generator started at `seed`; lib/Dialect/NVFP4/Transforms/ApplyRecipe.cpp
  // emits the same arithmetic into the host function.
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (streamIndex + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {

/// The deepest nesting of arrays and objects in JSON `text` (strings
/// skipped), scanning at most until `limit` is exceeded. llvm::json's
/// parser recurses once per level, so an untrusted file nested tens of
/// thousands deep would overflow the stack: this runs first.
unsigned jsonNestingDepth(std::string_view text, unsigned limit) {
  unsigned depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i; // the escaped character cannot end the string
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit)
        return deepest;
    } else if ((c == ']' || c == '}') && depth) {
      --depth;
    }
  }
  return deepest;
}

/// Largest element count a buffer may have: !nvfp4.tensor's rule T6 (2^47).
constexpr int64_t kMaxElements = int64_t(1) << 47;
/// Bound on argument, result and buffer indices (tables are sized by them).
constexpr int64_t kMaxIndex = int64_t(1) << 20;

class Parser {
public:
  explicit Parser(std::string origin) : origin(std::move(origin)) {}

  Status error(const std::string &where, const std::string &message) const {
    return Status::error(ErrorCode::InvalidManifest,
                         origin + ": " + (where.empty() ? "" : where + ": ") +
                             message);
  }

  /// An optional non-negative integer field (-1 when absent).
  Status index(const json::Object &object, const char *key,
               const std::string &where, int64_t &out) const {
    out = -1;
    const json::Value *v = object.get(key);
    if (!v)
      return Status::success();
    std::optional<int64_t> i = v->getAsInteger();
    if (!i || *i < 0)
      return error(where, std::string("\"") + key +
                              "\" must be a non-negative integer");
    if (*i >= kMaxIndex)
      return error(where,
                   llvm::formatv("\"{0}\" {1} is out of range", key, *i).str());
    out = *i;
    return Status::success();
  }

  Status dims(const json::Object &object, const char *key,
              const std::string &where, uint32_t out[3]) const {
    const json::Array *a = object.getArray(key);
    if (!a || a->size() != 3)
      return error(where, std::string("\"") + key +
                              "\" must be an array of 3 integers");
    for (size_t d = 0; d < 3; ++d) {
      std::optional<int64_t> i = (*a)[d].getAsInteger();
      if (!i)
        return error(where, std::string("\"") + key +
                                "\" must be an array of 3 integers");
      if (*i <= 0 || *i > int64_t(UINT32_MAX))
        return error(where,
                     llvm::formatv("{0} [{1}, {2}, {3}] is not static and "
                                   "positive (computed at run time by the "
                                   "host function?); this runtime cannot "
                                   "launch it",
                                   key, (*a)[0], (*a)[1], (*a)[2])
                         .str());
      out[d] = static_cast<uint32_t>(*i);
    }
    return Status::success();
  }

  /// A required array of integers (any count; the caller checks it).
  Status intArray(const json::Object &object, const char *key,
                  const std::string &where, std::vector<int64_t> &out) const {
    const json::Array *a = object.getArray(key);
    if (!a)
      return error(where, std::string("\"") + key +
                              "\" must be an array of integers");
    out.clear();
    for (const json::Value &v : *a) {
      std::optional<int64_t> i = v.getAsInteger();
      if (!i)
        return error(where, std::string("\"") + key +
                                "\" must be an array of integers");
      out.push_back(*i);
    }
    return Status::success();
  }

  /// An optional string field that must be one of `names` (index into
  /// `names` in `out`; unchanged when absent).
  template <typename E, size_t N>
  Status choice(const json::Object &object, const char *key,
                const std::string &where, const char *const (&names)[N],
                E &out) const {
    const json::Value *v = object.get(key);
    if (!v)
      return Status::success();
    std::optional<llvm::StringRef> text = v->getAsString();
    std::string allowed;
    for (size_t i = 0; i < N; ++i)
      allowed += std::string(i ? ", " : "") + "\"" + names[i] + "\"";
    if (!text)
      return error(where, std::string("\"") + key + "\" must be one of " +
                              allowed);
    for (size_t i = 0; i < N; ++i)
      if (*text == names[i]) {
        out = static_cast<E>(i);
        return Status::success();
      }
    return error(where, "unknown " + std::string(key) + " '" + text->str() +
                            "' (expected " + allowed + ")");
  }

  Status type(const json::Object &object, const char *key,
              const std::string &where, ScalarType &out) const {
    std::optional<llvm::StringRef> name = object.getString(key);
    if (!name)
      return error(where, std::string("missing \"") + key + "\"");
    std::optional<ScalarType> t =
        parseScalarType(std::string_view(name->data(), name->size()));
    if (!t)
      return error(where,
                   "unknown " + std::string(key) + " '" + name->str() + "'");
    out = *t;
    return Status::success();
  }

  std::string origin;
};

} // namespace

/// A {"type": "tensormap"} parameter: its buffer exists, its fields are
/// known, the driver's rules hold (computeTensorMapEncoding) and its dims
/// cover exactly the buffer.
static Status parseTensorMap(const Parser &p, const json::Object &po,
                             const std::string &where,
                             const std::vector<BufferSpec> &buffers,
                             ParamSpec &param) {
  param.kind = ParamSpec::TensorMap;
  TensorMapSpec tm;
  if (Status s = p.index(po, "buffer", where, tm.buffer); !s.ok())
    return s;
  if (tm.buffer < 0)
    return p.error(where, "tensormap parameter without \"buffer\"");
  if (tm.buffer >= int64_t(buffers.size()))
    return p.error(where, llvm::formatv("buffer {0} does not exist (there "
                                        "are {1} buffers)",
                                        tm.buffer, buffers.size())
                              .str());
  const BufferSpec &buffer = buffers[tm.buffer];
  // "ui8" (unsigned bytes, how the compiler may name the copy's type) is i8
  // here; without "element_type" the buffer's is used.
  tm.elementType = buffer.elementType;
  if (std::optional<llvm::StringRef> name = po.getString("element_type");
      name && *name == "ui8")
    tm.elementType = ScalarType::I8;
  else if (po.get("element_type"))
    if (Status s = p.type(po, "element_type", where, tm.elementType); !s.ok())
      return s;
  if (Status s = p.intArray(po, "dims", where, tm.dims); !s.ok())
    return s;
  if (Status s = p.intArray(po, "box", where, tm.box); !s.ok())
    return s;
  static const char *const swizzles[] = {"none", "32B", "64B", "128B"};
  static const char *const promotions[] = {"none", "64B", "128B", "256B"};
  static const char *const fills[] = {"zero", "nan"};
  if (Status s = p.choice(po, "swizzle", where, swizzles, tm.swizzle); !s.ok())
    return s;
  if (Status s =
          p.choice(po, "l2_promotion", where, promotions, tm.l2Promotion);
      !s.ok())
    return s;
  if (Status s = p.choice(po, "oob_fill", where, fills, tm.oobFill); !s.ok())
    return s;
  Expected<TensorMapEncoding> encoding = computeTensorMapEncoding(tm);
  if (!encoding.ok())
    return p.error(where, "tensormap: " + encoding.message());
  // Each dim is in [1, 2^32] (checked above): saturate rather than
  // overflow; a saturated product matches no buffer.
  const uint64_t cap = uint64_t(kMaxElements) * 16;
  uint64_t elements = 1;
  for (int64_t d : tm.dims)
    elements = elements > cap / uint64_t(d) ? cap : elements * uint64_t(d);
  if (elements * scalarTypeSize(tm.elementType) != buffer.bytes())
    return p.error(
        where,
        llvm::formatv("tensormap dims [{0}] hold {1}{2} x {3}, but buffer "
                      "{4} is {5} x {6} ({7} bytes)",
                      joinDims(tm.dims, ", "), elements == cap ? ">= " : "",
                      elements, scalarTypeName(tm.elementType), tm.buffer,
                      buffer.elements, scalarTypeName(buffer.elementType),
                      buffer.bytes())
            .str());
  param.type = tm.elementType;
  param.buffer = tm.buffer;
  param.tensorMap = std::move(tm);
  return Status::success();
}

Expected<Manifest>
nvfp4::runtime::Manifest::parse(std::string_view text,
                                std::string_view originView) {
  Parser p{std::string(originView)};
  if (text.size() > kMaxManifestBytes)
    return p.error("", llvm::formatv("{0} bytes; a manifest may have at most "
                                     "{1}",
                                     text.size(), kMaxManifestBytes)
                           .str());
  if (jsonNestingDepth(text, kMaxManifestDepth) > kMaxManifestDepth)
    return p.error("", llvm::formatv("nested more than {0} levels deep; a "
                                     "manifest needs fewer",
                                     kMaxManifestDepth)
                           .str());
  llvm::Expected<json::Value> root =
      json::parse(llvm::StringRef(text.data(), text.size()));
  if (!root)
    return p.error("", "not valid JSON: " + llvm::toString(root.takeError()));
  const json::Object *top = root->getAsObject();
  if (!top)
    return p.error("", "not a JSON object");

  Manifest m;
  m.origin_ = std::string(originView);
  if (std::optional<llvm::StringRef> f = top->getString("function"))
    m.function_ = f->str();
  if (std::optional<llvm::StringRef> c = top->getString("chip"))
    m.chip_ = c->str();

  const json::Array *buffers = top->getArray("buffers");
  if (!buffers)
    return p.error("", "missing \"buffers\" array");
  const json::Array *kernels = top->getArray("kernels");
  if (!kernels)
    return p.error("", "missing \"kernels\" array");

  // What nvfp4-compile left on the host: parsed (and shown by describe())
  // here, refused by checkRunnable().
  if (const json::Value *h = top->get("host_computation")) {
    const json::Array *ops = h->getAsArray();
    if (!ops)
      return p.error("", "\"host_computation\" must be an array");
    for (auto [i, value] : llvm::enumerate(*ops)) {
      std::string where = llvm::formatv("host_computation[{0}]", i).str();
      const json::Object *o = value.getAsObject();
      if (!o)
        return p.error(where, "not an object");
      std::optional<llvm::StringRef> op = o->getString("op");
      std::optional<llvm::StringRef> location = o->getString("location");
      if (!op || op->empty())
        return p.error(where, "\"op\" must be a non-empty string");
      if (!location)
        return p.error(where, "\"location\" must be a string");
      m.hostComputation_.push_back({op->str(), location->str()});
    }
  }

  for (auto [i, value] : llvm::enumerate(*buffers)) {
    std::string where = llvm::formatv("buffers[{0}]", i).str();
    const json::Object *b = value.getAsObject();
    if (!b)
      return p.error(where, "not an object");
    BufferSpec spec;
    if (Status s = p.type(*b, "element_type", where, spec.elementType); !s.ok())
      return s;
    std::optional<int64_t> elements =
        b->get("elements") ? b->get("elements")->getAsInteger() : std::nullopt;
    if (!elements || *elements < 0)
      return p.error(where, "\"elements\" must be a non-negative integer");
    if (*elements > kMaxElements)
      return p.error(
          where,
          llvm::formatv("{0} elements is more than 2^47", *elements).str());
    spec.elements = *elements;
    if (const json::Value *z = b->get("zero_initialized")) {
      std::optional<bool> flag = z->getAsBoolean();
      if (!flag)
        return p.error(where, "\"zero_initialized\" must be true or false");
      spec.zeroInitialized = *flag;
    }
    for (auto [key, field] :
         {std::pair<const char *, int64_t *>{"argument", &spec.argument},
          {"result", &spec.result},
          {"fill_from_argument", &spec.fillFromArgument}})
      if (Status s = p.index(*b, key, where, *field); !s.ok())
        return s;
    if (const json::Value *f = b->get("fill_bits")) {
      std::optional<int64_t> bits = f->getAsInteger();
      if (!bits || *bits < 0 || *bits > int64_t(UINT32_MAX)) {
        std::string shown;
        llvm::raw_string_ostream(shown) << *f;
        return p.error(where, "\"fill_bits\" " + shown +
                                  " is not a 32-bit pattern (an integer "
                                  "from 0 to 4294967295)");
      }
      // One fill per buffer: a runner must not have to guess which wins.
      if (spec.argument >= 0)
        return p.error(where, llvm::formatv("\"fill_bits\" on a buffer that "
                                            "holds argument {0}",
                                            spec.argument)
                                  .str());
      if (spec.zeroInitialized)
        return p.error(where, "\"fill_bits\" and \"zero_initialized\": true "
                              "both set the buffer's contents");
      if (spec.fillFromArgument >= 0)
        return p.error(where, "\"fill_bits\" and \"fill_from_argument\" both "
                              "fill the buffer");
      // The bits are one 32-bit element; nvfp4-compile writes them only for
      // i32 and f32 buffers.
      if (scalarTypeSize(spec.elementType) != 4)
        return p.error(where,
                       llvm::formatv("\"fill_bits\" fills 32-bit elements, "
                                     "but the buffer's are {0}",
                                     scalarTypeName(spec.elementType))
                           .str());
      spec.fillBits = static_cast<uint32_t>(*bits);
    }
    m.buffers_.push_back(spec);
  }

  for (auto [k, value] : llvm::enumerate(*kernels)) {
    std::string where = llvm::formatv("kernels[{0}]", k).str();
    const json::Object *o = value.getAsObject();
    if (!o)
      return p.error(where, "not an object");
    KernelSpec spec;
    std::optional<llvm::StringRef> name = o->getString("name");
    if (!name || name->empty())
      return p.error(where, "missing \"name\"");
    spec.name = name->str();
    where += " (" + spec.name + ")";
    if (std::optional<llvm::StringRef> op = o->getString("op"))
      spec.op = op->str();
    if (Status s = p.dims(*o, "grid", where, spec.grid); !s.ok())
      return s;
    if (Status s = p.dims(*o, "block", where, spec.block); !s.ok())
      return s;
    if (const json::Value *smem = o->get("shared_memory_bytes")) {
      std::optional<int64_t> bytes = smem->getAsInteger();
      if (!bytes)
        return p.error(where, "\"shared_memory_bytes\" must be an integer");
      if (*bytes < 0 || *bytes > int64_t(UINT32_MAX))
        return p.error(where,
                       llvm::formatv("shared_memory_bytes {0} is not static "
                                     "(computed at run time by the host "
                                     "function?); this runtime cannot "
                                     "launch it",
                                     *bytes)
                           .str());
      spec.sharedMemoryBytes = static_cast<uint32_t>(*bytes);
    }
    const json::Array *params = o->getArray("params");
    if (!params)
      return p.error(where, "missing \"params\" array");
    for (auto [j, pv] : llvm::enumerate(*params)) {
      std::string pwhere = where + llvm::formatv(": params[{0}]", j).str();
      const json::Object *po = pv.getAsObject();
      if (!po)
        return p.error(pwhere, "not an object");
      ParamSpec param;
      std::optional<llvm::StringRef> type = po->getString("type");
      if (!type)
        return p.error(pwhere, "missing \"type\"");
      if (*type == "tensormap") {
        if (Status s = parseTensorMap(p, *po, pwhere, m.buffers_, param);
            !s.ok())
          return s;
      } else if (*type == "ptr") {
        param.kind = ParamSpec::Pointer;
        if (po->get("element_type"))
          if (Status s = p.type(*po, "element_type", pwhere, param.type);
              !s.ok())
            return s;
        if (Status s = p.index(*po, "buffer", pwhere, param.buffer); !s.ok())
          return s;
        if (param.buffer < 0)
          return p.error(pwhere, "pointer parameter without \"buffer\"");
        if (param.buffer >= int64_t(m.buffers_.size()))
          return p.error(pwhere,
                         llvm::formatv("buffer {0} does not exist (there are "
                                       "{1} buffers)",
                                       param.buffer, m.buffers_.size())
                             .str());
        // The kernel's view of the buffer ("element_type" x "elements")
        // must fit in it: a larger view would read or write past the
        // allocation.
        const BufferSpec &buffer = m.buffers_[param.buffer];
        if (const json::Value *e = po->get("elements")) {
          std::optional<int64_t> elements = e->getAsInteger();
          if (!elements || *elements < 0)
            return p.error(pwhere,
                           "\"elements\" must be a non-negative integer");
          if (!po->get("element_type"))
            param.type = buffer.elementType;
          uint64_t viewBytes =
              uint64_t(*elements) > uint64_t(kMaxElements)
                  ? UINT64_MAX
                  : uint64_t(*elements) * scalarTypeSize(param.type);
          if (viewBytes > buffer.bytes())
            return p.error(
                pwhere, llvm::formatv("the kernel views buffer {0} as {1} x "
                                      "{2}, more than its {3} x {4} ({5} "
                                      "bytes)",
                                      param.buffer, *elements,
                                      scalarTypeName(param.type),
                                      buffer.elements,
                                      scalarTypeName(buffer.elementType),
                                      buffer.bytes())
                            .str());
        }
      } else {
        if (Status s = p.type(*po, "type", pwhere, param.type); !s.ok())
          return s;
        if (!detail::isSupportedScalarParamType(param.type))
          return p.error(pwhere, "scalar parameters of type " + type->str() +
                                     " are not supported");
        if (Status s = p.index(*po, "argument", pwhere, param.argument);
            !s.ok())
          return s;
        if (const json::Value *stream = po->get("seed_stream")) {
          std::optional<int64_t> index = stream->getAsInteger();
          if (!index || *index < 0)
            return p.error(pwhere,
                           "\"seed_stream\" must be a non-negative integer");
          if (param.argument < 0)
            return p.error(pwhere, "\"seed_stream\" without \"argument\" "
                                   "(the base seed)");
          if (param.type != ScalarType::I64)
            return p.error(pwhere, std::string("\"seed_stream\" needs an "
                                               "i64 parameter, not ") +
                                       scalarTypeName(param.type));
          param.seedStream = static_cast<uint64_t>(*index);
        }
        if (const json::Value *v = po->get("value")) {
          std::string valueText;
          if (std::optional<llvm::StringRef> str = v->getAsString())
            valueText = str->str();
          else if (v->getAsNumber())
            llvm::raw_string_ostream(valueText) << *v;
          else
            return p.error(pwhere, "\"value\" must be a string or a number");
          Expected<ScalarValue> parsed =
              parseScalarValue(param.type, valueText);
          if (!parsed.ok())
            return p.error(pwhere, "\"value\": " + parsed.message());
          param.value = *parsed;
        }
        if (param.argument < 0 && !param.value)
          return p.error(pwhere,
                         "scalar parameter with neither \"argument\" nor "
                         "\"value\" (computed by the host function); this "
                         "runtime cannot launch it");
      }
      spec.params.push_back(param);
    }
    m.kernels_.push_back(std::move(spec));
  }

  // Host-function arguments: one buffer per array argument, one type per
  // scalar argument.
  auto argumentSlot = [&](int64_t index) -> ArgumentSpec & {
    if (index >= int64_t(m.arguments_.size()))
      m.arguments_.resize(index + 1);
    return m.arguments_[index];
  };
  for (auto [i, b] : llvm::enumerate(m.buffers_)) {
    if (b.argument < 0)
      continue;
    std::string where = llvm::formatv("buffers[{0}]", i).str();
    ArgumentSpec &arg = argumentSlot(b.argument);
    if (arg.kind == ArgumentSpec::Array)
      return p.error(where, llvm::formatv("argument {0} already fills "
                                          "buffer {1}",
                                          b.argument, arg.buffer)
                                .str());
    arg.kind = ArgumentSpec::Array;
    arg.buffer = static_cast<int64_t>(i);
    arg.type = b.elementType;
    arg.bytes = b.bytes();
  }
  for (auto [k, kernel] : llvm::enumerate(m.kernels_)) {
    for (auto [j, param] : llvm::enumerate(kernel.params)) {
      if (!param.isScalar() || param.argument < 0)
        continue;
      ArgumentSpec &arg = argumentSlot(param.argument);
      if (arg.kind == ArgumentSpec::Array)
        return p.error(
            llvm::formatv("kernels[{0}] ({1}): params[{2}]", k, kernel.name, j)
                .str(),
            llvm::formatv("argument {0} is a scalar here but fills buffer "
                          "{1}",
                          param.argument, arg.buffer)
                .str());
      if (arg.kind == ArgumentSpec::Unused) {
        arg.kind = ArgumentSpec::Scalar;
        arg.type = param.type;
      }
    }
  }
  for (auto [i, b] : llvm::enumerate(m.buffers_)) {
    if (b.fillFromArgument < 0)
      continue;
    std::string where = llvm::formatv("buffers[{0}]", i).str();
    ArgumentSpec &arg = argumentSlot(b.fillFromArgument);
    if (arg.kind == ArgumentSpec::Array)
      return p.error(where, llvm::formatv("fill_from_argument {0} is an "
                                          "array argument",
                                          b.fillFromArgument)
                                .str());
    // The only producer today is nvfp4.quantize with an explicit amax: an
    // f32 argument bitcast to the i32 buffer the kernel reads (see
    // QuantizeKernels.cpp). Unless a kernel parameter says otherwise, the
    // argument is therefore an f32.
    if (arg.kind == ArgumentSpec::Unused) {
      arg.kind = ArgumentSpec::Scalar;
      arg.type = ScalarType::F32;
    }
    if (scalarTypeSize(arg.type) != scalarTypeSize(b.elementType))
      return p.error(where,
                     llvm::formatv("fill_from_argument {0} is a {1} scalar, "
                                   "which cannot fill {2} elements",
                                   b.fillFromArgument, scalarTypeName(arg.type),
                                   scalarTypeName(b.elementType))
                         .str());
  }

  for (auto [i, b] : llvm::enumerate(m.buffers_)) {
    if (b.result < 0)
      continue;
    if (b.result >= int64_t(m.results_.size()))
      m.results_.resize(b.result + 1, -1);
    if (m.results_[b.result] >= 0)
      return p.error(llvm::formatv("buffers[{0}]", i).str(),
                     llvm::formatv("result {0} is already buffer {1}", b.result,
                                   m.results_[b.result])
                         .str());
    m.results_[b.result] = static_cast<int64_t>(i);
  }
  return m;
}

Expected<Manifest> nvfp4::runtime::Manifest::load(const std::string &path) {
  // Only regular files, and only up to kMaxManifestBytes: /dev/zero or a
  // FIFO would otherwise be read until memory runs out.
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return Status::error(ErrorCode::Io,
                         "cannot read manifest '" + path + "': " + ec.message());
  if (!llvm::sys::fs::is_regular_file(status))
    return Status::error(ErrorCode::Io, "cannot read manifest '" + path +
                                            "': not a regular file");
  if (status.getSize() > kMaxManifestBytes)
    return Status::error(
        ErrorCode::InvalidManifest,
        llvm::formatv("{0}: {1} bytes; a manifest may have at most {2}", path,
                      status.getSize(), kMaxManifestBytes)
            .str());
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file)
    return Status::error(ErrorCode::Io, "cannot read manifest '" + path +
                                            "': " + file.getError().message());
  llvm::StringRef text = (*file)->getBuffer();
  return parse(std::string_view(text.data(), text.size()), path);
}

Status nvfp4::runtime::Manifest::checkRunnable() const {
  if (hostComputation_.empty())
    return Status::success();
  std::string ops;
  for (auto [i, h] : llvm::enumerate(hostComputation_)) {
    if (i == 3) {
      ops += llvm::formatv(", and {0} more", hostComputation_.size() - 3);
      break;
    }
    ops += (i ? ", " : "") + h.op + (h.location.empty() ? "" : " at " + h.location);
  }
  return Status::error(
      ErrorCode::InvalidManifest,
      llvm::formatv("{0}: @{1} leaves computation on the host that no kernel "
                    "performs ({2} op{3}: {4}); its kernels alone would run "
                    "on buffers nobody wrote, so the runtime does not run "
                    "this bundle",
                    origin_.empty() ? "manifest" : origin_,
                    function_.empty() ? "?" : function_,
                    hostComputation_.size(),
                    hostComputation_.size() == 1 ? "" : "s", ops)
          .str());
}

std::string nvfp4::runtime::Manifest::describe() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "function " << (function_.empty() ? "?" : function_) << " for "
     << (chip_.empty() ? "?" : chip_) << ": " << kernels_.size()
     << " launches, " << buffers_.size() << " buffers\n";
  if (!hostComputation_.empty()) {
    os << "host computation no kernel performs (the runtime refuses to run "
          "this bundle): "
       << hostComputation_.size() << " op"
       << (hostComputation_.size() == 1 ? "" : "s") << "\n";
    for (const HostComputation &h : hostComputation_)
      os << "  " << h.op << (h.location.empty() ? "" : " at " + h.location)
         << "\n";
  }
  auto array = [&](const BufferSpec &b) {
    os << b.elements << " x " << scalarTypeName(b.elementType) << " ("
       << b.bytes() << " bytes)";
  };
  for (auto [i, a] : llvm::enumerate(arguments_)) {
    os << "argument " << i << ": ";
    if (a.kind == ArgumentSpec::Unused)
      os << "unused by the kernels";
    else if (a.kind == ArgumentSpec::Scalar)
      os << "scalar " << scalarTypeName(a.type);
    else {
      os << "array ";
      array(buffers_[a.buffer]);
      os << ", buffer " << a.buffer;
    }
    os << "\n";
  }
  for (auto [i, buffer] : llvm::enumerate(results_)) {
    os << "result " << i << ": ";
    if (buffer < 0) {
      os << "not a device buffer\n";
      continue;
    }
    array(buffers_[buffer]);
    os << ", buffer " << buffer << "\n";
  }
  for (auto [i, b] : llvm::enumerate(buffers_)) {
    os << "buffer " << i << ": ";
    array(b);
    if (b.argument >= 0)
      os << ", argument " << b.argument;
    else if (b.fillBits)
      os << ", filled with " << llvm::format_hex(*b.fillBits, 10);
    else if (b.zeroInitialized)
      os << ", zero-initialized";
    else
      os << ", poisoned (0xAB)";
    if (b.fillFromArgument >= 0)
      os << ", filled with argument " << b.fillFromArgument;
    if (b.result >= 0)
      os << ", result " << b.result;
    os << "\n";
  }
  for (auto [i, k] : llvm::enumerate(kernels_)) {
    os << "launch " << i << ": " << k.name << " grid " << k.grid[0] << "x"
       << k.grid[1] << "x" << k.grid[2] << " block " << k.block[0] << "x"
       << k.block[1] << "x" << k.block[2] << " shared " << k.sharedMemoryBytes
       << " (";
    for (auto [j, param] : llvm::enumerate(k.params)) {
      if (j)
        os << ", ";
      if (param.isPointer())
        os << "buffer " << param.buffer;
      else if (param.isTensorMap())
        os << detail::describeTensorMap(*param.tensorMap);
      else if (param.seedStream)
        os << "i64 stream seed " << *param.seedStream << " of argument "
           << param.argument;
      else if (param.argument >= 0)
        os << scalarTypeName(param.type) << " argument " << param.argument;
      else
        os << scalarTypeName(param.type) << " "
           << (param.value->isFloat
                   ? llvm::formatv("{0}", param.value->floatValue).str()
                   : std::to_string(param.value->intValue));
    }
    os << ")\n";
    // What a session passes to the driver for each tensor map.
    for (auto [j, param] : llvm::enumerate(k.params)) {
      if (!param.isTensorMap())
        continue;
      Expected<TensorMapEncoding> e = computeTensorMapEncoding(*param.tensorMap);
      os << "  param " << j << ": "
         << (e.ok() ? detail::describeTensorMapEncoding(*e) : e.message())
         << "\n";
    }
  }
  return text;
}
