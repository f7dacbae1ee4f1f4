//===- nvfp4-refgen.cpp - self-checking programs for the reference lowering -===//
//
// Part of the nvfp4 project.
//
// Writes an MLIR program that runs one nvfp4 op on deterministic input data
// and compares every result byte with what the C++ numerics library
// (lib/Numerics) computes for the same data, printing one
// "<part> mismatches: N" line per result. The lit tests under
// test/Reference/ lower the program with nvfp4-reference-pipeline, execute it
// with mlir-runner and check that every count is 0 -- so the CPU lowering is
// compared with an independent implementation, not with pasted numbers.
//
//   nvfp4-refgen quantize --shape=64x128 --block=16x16 --rounding=sr --seed=7
//   nvfp4-refgen matmul --m=32 --n=48 --k=256 --block-b=16x16 --alpha=0.5
//   nvfp4-refgen transpose --shape=48x80   (16x16 blocks; expected values
//                                           quantize the transposed data)
//   nvfp4-refgen quantize --hadamard=0xD7E8 (the op's `hadamard` form;
//                                           expected: quantize(RHT(x)))
//   nvfp4-refgen dual --hadamard=0xD7E8     (nvfp4.dual_quantize; expected:
//                                           quantize(x) and quantize(RHT(x^T)))
//   nvfp4-refgen matmul --output-amax      (the second result; expected:
//                                           the amax of the library's C)
//   nvfp4-refgen quantize --format=mxfp8_e4m3 (and dequantize, matmul with
//                                           --format-a/--format-b, swizzle):
//                                           the MX formats (--data=codes for
//                                           dequantize: every E8M0 scale
//                                           with every element code)
//   nvfp4-refgen dequantize --decode-scale=F (and matmul with
//                                           --decode-scale-a/-b): the value
//                                           holds decode scale F exactly,
//                                           as from a checkpoint
//                                           (tensor_scale = decode)
//   nvfp4-refgen matmul --quantize-output=F (nvfp4.scaled_matmul_quantize
//                                           with amax F; expected: the
//                                           library's quantization of C
//                                           rounded to BF16)
//
// Options: --shape=RxC, --m/--n/--k, --block[-a|-b]=1x16|16x16,
// --rounding=rn|sr, --seed=N (SR key), --amax=F (explicit amax),
// --layout=linear|swizzled, --data=random|edge|zero|inf|cancel, --data-seed=N,
// --sign-mask=N, --hadamard=N (quantize/amax/dual), --output-amax (matmul),
// --col-rounding=rn|sr, --col-seed=N, --col-amax=F (dual: the columnwise
// part; --rounding, --seed and --amax are the rowwise part's),
// --alpha=F, --out=f32|bf16, --corrupt (flip one expected byte: a negative
// control showing the comparison can fail); MX only: --in=bf16|f32
// (quantize), --nan-scale (dequantize --data=codes: the E8M0 NaN 0xFF too;
// with --out=bf16 two NaNs compare equal whatever their bits, see
// docs/Numerics.md 11.6),
// --data=bf16-all (every BF16 bit pattern, 65536 elements), --data=scale-edges
// (FP32 block amaxes at and next to max_elem * 2^k, with --in=f32).
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Numerics/Numerics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace nvfp4::numerics;

namespace {

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "nvfp4-refgen: error: %s\n", message.c_str());
  std::exit(1);
}

template <typename T> T check(Expected<T> value) {
  if (!value.ok())
    fail(value.message());
  return value.take();
}

/// --key=value options.
struct Options {
  std::map<std::string, std::string> values;

  std::string get(const std::string &key, const std::string &fallback) const {
    auto it = values.find(key);
    return it == values.end() ? fallback : it->second;
  }
  bool has(const std::string &key) const { return values.count(key) != 0; }
  int64_t getInt(const std::string &key, int64_t fallback) const {
    return has(key) ? std::strtoll(get(key, "").c_str(), nullptr, 0) : fallback;
  }
  float getFloat(const std::string &key, float fallback) const {
    return has(key) ? std::strtof(get(key, "").c_str(), nullptr) : fallback;
  }
};

std::pair<int64_t, int64_t> parsePair(const std::string &text) {
  size_t x = text.find('x');
  if (x == std::string::npos)
    fail("expected AxB, got '" + text + "'");
  return {std::atoll(text.substr(0, x).c_str()),
          std::atoll(text.substr(x + 1).c_str())};
}

BlockShape parseBlock(const std::string &text) {
  if (text == "1x16")
    return BlockShape::Row1x16;
  if (text == "16x16")
    return BlockShape::Tile16x16;
  fail("block must be 1x16 or 16x16, got '" + text + "'");
}

const char *blockSyntax(BlockShape block) {
  return block == BlockShape::Row1x16 ? "1x16" : "16x16";
}

//===----------------------------------------------------------------------===//
// Input data
//===----------------------------------------------------------------------===//

/// BF16-representable values. `random`: normal values times a per-block
/// power of two in [2^-12, 2^12], so block scales cover E4M3's range
/// (subnormal ones included). `edge`: random data with NUMERICS.md section 6
/// cases planted in the first blocks. `zero`: all zeros. `inf`: random data
/// with one +inf. `cancel`: runs of 16 whose RHT sums round visibly (small
/// values from 2^-8 to 2^8 and two or four copies of one large value, +-B
/// with B in 2^16 .. 2^31, that cancel in many outputs), so that a wrong
/// order of the RHT's additions shows in the BF16 results.
std::vector<float> makeData(int64_t rows, int64_t cols, const Options &opts,
                            int64_t stream) {
  std::mt19937_64 rng(opts.getInt("data-seed", 1) * 1000003 + stream);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-12, 12);
  std::string kind = opts.get("data", "random");
  std::vector<float> data(rows * cols);
  if (kind == "zero")
    return data;
  if (kind == "scale-edges") {
    // MX scale boundaries (FP32 data, for --in=f32): block b's amax is
    // max_elem * 2^k and its two FP32 neighbours, k from -160 to 127, so
    // v = bamax / max_elem lands just below, on and just above every power
    // of two, the subnormal ones included; the other elements are smaller
    // values of both signs and zeros.
    std::optional<MXFormat> format = parseMXFormat(opts.get("format", ""));
    if (!format)
      fail("--data=scale-edges is for the MX formats");
    float max = mxElementMax(*format);
    std::vector<float> amaxes;
    for (int k = -160; k <= 127; ++k) {
      float t = std::ldexp(max, k);
      if (t == 0.0f || std::isinf(t))
        continue;
      amaxes.push_back(std::nextafter(t, 0.0f));
      amaxes.push_back(t);
      amaxes.push_back(std::nextafter(t, std::numeric_limits<float>::infinity()));
    }
    if (cols != 32 || rows < (int64_t)amaxes.size())
      fail("--data=scale-edges needs --shape=" + std::to_string(amaxes.size()) +
           "x32 or more rows");
    std::uniform_real_distribution<float> fraction(0.0f, 1.0f);
    for (int64_t r = 0; r < rows; ++r) {
      float amax = amaxes[r % amaxes.size()];
      float *block = data.data() + r * 32;
      for (int64_t i = 0; i < 32; ++i)
        block[i] = (i % 5 == 4 ? 0.0f : amax * fraction(rng)) *
                   (rng() & 1 ? -1.0f : 1.0f);
      block[r % 32] = (r & 1) ? -amax : amax;
    }
    return data;
  }
  if (kind == "bf16-all") {
    // Every BF16 bit pattern once, in order: 1x32 blocks of consecutive
    // patterns, so there are blocks of zeros and subnormals, of every
    // binade, of +-Inf with NaNs and of NaNs only.
    if (rows * cols != 65536)
      fail("--data=bf16-all needs 65536 elements (e.g. --shape=2048x32)");
    for (int64_t i = 0; i < 65536; ++i)
      data[i] = bf16ToFloat(static_cast<uint16_t>(i));
    return data;
  }
  if (kind == "cancel") {
    std::uniform_real_distribution<double> smallExponent(-8.0, 8.0);
    std::uniform_int_distribution<int> bigExponent(16, 30);
    for (int64_t run = 0; run < rows * cols / 16; ++run) {
      float *values = data.data() + 16 * run;
      for (int64_t i = 0; i < 16; ++i)
        values[i] = roundToBF16(float(std::exp2(smallExponent(rng))) *
                                (rng() & 1 ? -1.0f : 1.0f));
      float big = roundToBF16(std::ldexp(1.0f + float(rng() % 128) / 128.0f,
                                         bigExponent(rng)));
      int copies = rng() & 1 ? 2 : 4;
      for (int c = 0; c < copies; ++c)
        values[rng() % 16] = rng() & 1 ? big : -big;
    }
    return data;
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < cols / 16; ++b) {
      float scale = std::ldexp(1.0f, exponent(rng));
      for (int64_t i = 0; i < 16; ++i)
        data[r * cols + b * 16 + i] = roundToBF16(normal(rng) * scale);
    }
  }
  if (kind == "inf") {
    data[data.size() / 2] = std::numeric_limits<float>::infinity();
  } else if (kind == "edge") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    // Block 0: NaN, signed zeros, a huge value and small ones around it.
    const float planted[] = {nan, -0.0f, 0.0f, -1e-3f, 1e4f, -1e4f, 0.5f,
                             -0.75f, 1e-30f, -1e-30f, 3.0f, -3.0f, 7.0f,
                             1.0f, -2.0f, 0.25f};
    for (int64_t i = 0; i < 16 && i < (int64_t)data.size(); ++i)
      data[i] = roundToBF16(planted[i]);
    // Block 1: all zero. Block 2: tiny values whose scale rounds to 0 (their
    // codes saturate to +-6). Block 3: values giving a subnormal scale.
    for (int64_t i = 0; i < 16; ++i) {
      if (16 + i < (int64_t)data.size())
        data[16 + i] = 0.0f;
      if (32 + i < (int64_t)data.size())
        data[32 + i] = roundToBF16((i % 2 ? -1.0f : 1.0f) * 1e-8f * (i + 1));
      if (48 + i < (int64_t)data.size())
        data[48 + i] = roundToBF16((i % 3 ? 1.0f : -1.0f) * 1e-3f * (i + 1));
    }
  } else if (kind != "random") {
    fail("unknown --data '" + kind + "'");
  }
  return data;
}

//===----------------------------------------------------------------------===//
// MLIR text
//===----------------------------------------------------------------------===//

/// A dense constant from raw little-endian element bytes ("0x..." form), so
/// NaN payloads and signed zeros survive exactly.
std::string denseHex(const void *bytes, size_t size) {
  static const char digits[] = "0123456789ABCDEF";
  std::string text = "dense<\"0x";
  const auto *p = static_cast<const uint8_t *>(bytes);
  for (size_t i = 0; i < size; ++i) {
    text += digits[p[i] >> 4];
    text += digits[p[i] & 15];
  }
  return text + "\">";
}

std::string shapeText(int64_t rows, int64_t cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

std::vector<uint16_t> toBF16Bits(const std::vector<float> &values) {
  std::vector<uint16_t> bits;
  for (float v : values)
    bits.push_back(floatToBF16(v));
  return bits;
}

std::vector<uint32_t> toF32Bits(const std::vector<float> &values) {
  std::vector<uint32_t> bits;
  for (float v : values)
    bits.push_back(floatToBits(v));
  return bits;
}

class Program {
public:
  explicit Program(bool corrupt) : corrupt(corrupt) {}

  /// Declares `%name = arith.constant <hex> : tensor<shape x type>`.
  template <typename T>
  void constant(const std::string &name, const std::vector<T> &values,
                const std::string &shape, const std::string &type) {
    body << "  %" << name << " = arith.constant "
         << denseHex(values.data(), values.size() * sizeof(T)) << " : tensor<"
         << shape << "x" << type << ">\n";
  }

  void line(const std::string &text) { body << "  " << text << "\n"; }

  /// Compares integer tensors %got and expected `want` elementwise and
  /// prints "<label> mismatches: N".
  template <typename T>
  void expectEqual(const std::string &label, const std::string &got,
                   std::vector<T> want, const std::string &shape,
                   const std::string &intType) {
    if (corrupt && !corrupted && !want.empty()) {
      want[0] ^= 1;
      corrupted = true;
    }
    std::string w = "want_" + label;
    constant(w, want, shape, intType);
    std::string t = "tensor<" + shape + "x" + intType + ">";
    line("%ne_" + label + " = arith.cmpi ne, %" + got + ", %" + w + " : " + t);
    countAndPrint(label, shape);
  }

  /// As expectEqual for the bits %got of floats of `floatType`, except that
  /// two NaNs count as equal whatever their sign and payload (which LLVM's
  /// floating-point arithmetic does not define).
  template <typename T>
  void expectEqualOrBothNaN(const std::string &label, const std::string &got,
                            std::vector<T> want, const std::string &shape,
                            const std::string &floatType,
                            const std::string &intType) {
    if (corrupt && !corrupted && !want.empty()) {
      want[0] ^= 1;
      corrupted = true;
    }
    std::string w = "want_" + label;
    constant(w, want, shape, intType);
    std::string t = "tensor<" + shape + "x" + intType + ">";
    std::string tf = "tensor<" + shape + "x" + floatType + ">";
    std::string t1 = "tensor<" + shape + "xi1>";
    line("%wf_" + label + " = arith.bitcast %" + w + " : " + t + " to " + tf);
    line("%gf_" + label + " = arith.bitcast %" + got + " : " + t + " to " + tf);
    line("%wn_" + label + " = arith.cmpf uno, %wf_" + label + ", %wf_" +
         label + " : " + tf);
    line("%gn_" + label + " = arith.cmpf uno, %gf_" + label + ", %gf_" +
         label + " : " + tf);
    line("%nn_" + label + " = arith.andi %wn_" + label + ", %gn_" + label +
         " : " + t1);
    line("%true_" + label + " = arith.constant dense<true> : " + t1);
    line("%notnn_" + label + " = arith.xori %nn_" + label + ", %true_" +
         label + " : " + t1);
    line("%bits_ne_" + label + " = arith.cmpi ne, %" + got + ", %" + w +
         " : " + t);
    line("%ne_" + label + " = arith.andi %bits_ne_" + label + ", %notnn_" +
         label + " : " + t1);
    countAndPrint(label, shape);
  }

  /// Counts the true elements of %ne_<label> and prints
  /// "<label> mismatches: N".
  void countAndPrint(const std::string &label, const std::string &shape) {
    std::string t1 = "tensor<" + shape + "xi1>";
    std::string t32 = "tensor<" + shape + "xi32>";
    line("%ne32_" + label + " = arith.extui %ne_" + label + " : " + t1 +
         " to " + t32);
    line("%init_" + label + " = arith.constant dense<0> : tensor<i32>");
    int rank = 1 + (int)std::count(shape.begin(), shape.end(), 'x');
    std::string dims;
    for (int d = 0; d < rank; ++d)
      dims += (d ? ", " : "") + std::to_string(d);
    line("%sum_" + label + " = linalg.reduce ins(%ne32_" + label + " : " +
         t32 + ") outs(%init_" + label + " : tensor<i32>) dimensions = [" +
         dims + "]\n    (%in: i32, %acc: i32) {\n" +
         "      %s = arith.addi %acc, %in : i32\n" +
         "      linalg.yield %s : i32\n    }");
    line("%n_" + label + " = tensor.extract %sum_" + label + "[] : tensor<i32>");
    line("vector.print str \"" + label + " mismatches: \"");
    line("vector.print %n_" + label + " : i32");
  }

  /// Bitcasts a float tensor %name to integers of the same width.
  std::string bits(const std::string &name, const std::string &shape,
                   const std::string &floatType, const std::string &intType) {
    std::string result = name + "_bits";
    line("%" + result + " = arith.bitcast %" + name + " : tensor<" + shape +
         "x" + floatType + "> to tensor<" + shape + "x" + intType + ">");
    return result;
  }

  /// i8 view of f4E2M1FN codes.
  std::string codeBytes(const std::string &name, const std::string &shape) {
    line("%" + name + "_i4 = arith.bitcast %" + name + " : tensor<" + shape +
         "xf4E2M1FN> to tensor<" + shape + "xi4>");
    line("%" + name + "_i8 = arith.extui %" + name + "_i4 : tensor<" + shape +
         "xi4> to tensor<" + shape + "xi8>");
    return name + "_i8";
  }

  /// %name = typed f4E2M1FN codes / f8E4M3FN scales from i8 data.
  void codesConstant(const std::string &name, const std::vector<uint8_t> &codes,
                     const std::string &shape) {
    constant(name + "_raw", codes, shape, "i8");
    line("%" + name + "_i4 = arith.trunci %" + name + "_raw : tensor<" + shape +
         "xi8> to tensor<" + shape + "xi4>");
    line("%" + name + " = arith.bitcast %" + name + "_i4 : tensor<" + shape +
         "xi4> to tensor<" + shape + "xf4E2M1FN>");
  }
  void scalesConstant(const std::string &name,
                      const std::vector<uint8_t> &scales,
                      const std::string &shape) {
    constant(name + "_raw", scales, shape, "i8");
    line("%" + name + " = arith.bitcast %" + name + "_raw : tensor<" + shape +
         "xi8> to tensor<" + shape + "xf8E4M3FN>");
  }

  /// A function beside @main (printed after it).
  void function(const std::string &text) { functions << text; }

  void print() const {
    std::printf("// Generated by nvfp4-refgen; expected values come from "
                "lib/Numerics.\nfunc.func @main() {\n%s  return\n}\n%s",
                body.str().c_str(), functions.str().c_str());
  }

private:
  std::ostringstream body;
  std::ostringstream functions;
  bool corrupt;
  bool corrupted = false;
};

std::string tensorType(int64_t rows, int64_t cols, BlockShape block,
                       bool swizzled, bool decodeScale = false) {
  return "!nvfp4.tensor<" + shapeText(rows, cols) +
         "xf4E2M1FN, scale = f8E4M3FN, block = " + blockSyntax(block) +
         (swizzled ? ", layout = swizzled_128x4" : "") +
         (decodeScale ? ", tensor_scale = decode" : "") + ">";
}

/// The (linear) IR type of the library's quantization `q`.
std::string tensorTypeOf(const QuantizedTensor &q) {
  return tensorType(q.Rows, q.Cols, q.Block, false, q.DecodeScale.has_value());
}

/// --<key>=F: replaces q's amax by decode scale F (a checkpoint's).
void applyDecodeScale(const Options &opts, const std::string &key,
                      QuantizedTensor &q) {
  if (!opts.has(key))
    return;
  q.DecodeScale = opts.getFloat(key, 0.0f);
  q.Amax = 0.0f;
  if (Status status = validateQuantizedTensor(q); !status.ok())
    fail("--" + key + ": " + status.message());
}

/// The library's scales in the layout of the IR type.
std::vector<uint8_t> scalesInLayout(const QuantizedTensor &q, bool swizzled) {
  if (!swizzled)
    return q.Scales;
  std::vector<uint8_t> perRow = q.Scales;
  if (q.Block == BlockShape::Tile16x16)
    perRow = check(replicateTileScales(q.Scales.data(), q.Scales.size(),
                                       q.scaleRows(), q.scaleCols()));
  return check(swizzleScales(perRow.data(), perRow.size(), q.Rows,
                             q.scaleCols()));
}

std::string scaleShape(const QuantizedTensor &q, bool swizzled) {
  if (!swizzled)
    return shapeText(q.scaleRows(), q.scaleCols());
  SwizzledScaleShape s = check(getSwizzledScaleShape(q.Rows, q.scaleCols()));
  return shapeText(s.PaddedRows, s.PaddedCols);
}

QuantizedTensor quantizeOrFail(const std::vector<float> &data, int64_t rows,
                               int64_t cols, const QuantizeOptions &options) {
  return check(quantize(data.data(), data.size(), rows, cols, options));
}

/// Emits %name = nvfp4.pack of the library's quantization `q`.
void emitPacked(Program &p, const std::string &name, const QuantizedTensor &q) {
  std::string shape = shapeText(q.Rows, q.Cols);
  p.codesConstant(name + "_codes", q.Codes, shape);
  p.scalesConstant(name + "_scales", q.Scales,
                   shapeText(q.scaleRows(), q.scaleCols()));
  char amax[64];
  std::snprintf(amax, sizeof(amax), "0x%08X",
                floatToBits(q.DecodeScale.value_or(q.Amax)));
  p.line("%" + name + "_amax = arith.constant " + amax + " : f32");
  p.line("%" + name + " = nvfp4.pack %" + name + "_codes, %" + name +
         "_scales, %" + name + "_amax : " + tensorTypeOf(q));
}

/// --hadamard=N: the RHT sign mask of the op's `hadamard` attribute.
uint16_t hadamardMask(const Options &opts) {
  int64_t mask = opts.getInt("hadamard", kDefaultHadamardSignMask);
  if (mask < 0 || mask > 0xFFFF)
    fail("--hadamard must be a 16-bit sign mask");
  return static_cast<uint16_t>(mask);
}

/// The library's RHT of `data` with --hadamard's mask.
std::vector<float> hadamardOrFail(const std::vector<float> &data,
                                  const Options &opts) {
  return check(hadamardTransform(data.data(), data.size(), hadamardMask(opts)));
}

/// Unpacks the block-scaled %`name` of `type` and expects the library's
/// quantization `want` (codes, linear scales, amax) in it.
void expectQuantized(Program &p, const std::string &name,
                     const std::string &type, const QuantizedTensor &want) {
  p.line("%codes, %scales, %amax = nvfp4.unpack %" + name + " : " + type);
  std::string shape = shapeText(want.Rows, want.Cols);
  p.expectEqual("codes", p.codeBytes("codes", shape), want.Codes, shape, "i8");
  std::string sShape = scaleShape(want, false);
  p.expectEqual("scales", p.bits("scales", sShape, "f8E4M3FN", "i8"),
                want.Scales, sShape, "i8");
  p.line("%amax_t = tensor.from_elements %amax : tensor<1xf32>");
  p.expectEqual("amax", p.bits("amax_t", "1", "f32", "i32"),
                toF32Bits({want.Amax}), "1", "i32");
}

//===----------------------------------------------------------------------===//
// Commands
//===----------------------------------------------------------------------===//

void emitQuantize(const Options &opts, Program &p) {
  auto [rows, cols] = parsePair(opts.get("shape", "32x64"));
  QuantizeOptions options;
  options.Block = parseBlock(opts.get("block", "1x16"));
  bool stochastic = opts.get("rounding", "rn") == "sr";
  options.Rounding =
      stochastic ? RoundingMode::Stochastic : RoundingMode::NearestEven;
  options.Seed = static_cast<uint64_t>(opts.getInt("seed", 0));
  if (opts.has("amax"))
    options.Amax = opts.getFloat("amax", 0.0f);
  bool swizzled = opts.get("layout", "linear") == "swizzled";

  std::vector<float> data = makeData(rows, cols, opts, 0);
  std::string operands;
  QuantizedTensor q = quantizeOrFail(
      opts.has("hadamard") ? hadamardOrFail(data, opts) : data, rows, cols,
      options);
  std::string shape = shapeText(rows, cols);
  std::string type = tensorType(rows, cols, options.Block, swizzled);

  p.constant("x", toBF16Bits(data), shape, "bf16");
  if (options.Amax) {
    char amax[64];
    std::snprintf(amax, sizeof(amax), "0x%08X", floatToBits(*options.Amax));
    p.line(std::string("%amax_in = arith.constant ") + amax + " : f32");
    operands += " amax(%amax_in)";
  }
  if (opts.has("hadamard"))
    operands += " hadamard(" + std::to_string(hadamardMask(opts)) + ")";
  if (stochastic) {
    p.line("%seed = arith.constant " + std::to_string(options.Seed) + " : i64");
    operands += " rounding<stochastic> seed(%seed)";
  }
  p.line("%q = nvfp4.quantize %x" + operands + " : tensor<" + shape +
         "xbf16> -> " + type);
  p.line("%codes, %scales, %amax = nvfp4.unpack %q : " + type);
  p.expectEqual("codes", p.codeBytes("codes", shape), q.Codes, shape, "i8");
  std::string sShape = scaleShape(q, swizzled);
  p.expectEqual("scales", p.bits("scales", sShape, "f8E4M3FN", "i8"),
                scalesInLayout(q, swizzled), sShape, "i8");
  p.line("%amax_t = tensor.from_elements %amax : tensor<1xf32>");
  p.expectEqual("amax", p.bits("amax_t", "1", "f32", "i32"),
                toF32Bits({q.Amax}), "1", "i32");
}

/// One part of nvfp4.dual_quantize: the library options and the op's
/// operand text, from --<prefix>rounding, --<prefix>seed, --<prefix>amax.
QuantizeOptions dualPart(const Options &opts, Program &p,
                         const std::string &prefix, const std::string &name,
                         std::string &operands) {
  QuantizeOptions options;
  bool stochastic = opts.get(prefix + "rounding", "rn") == "sr";
  options.Rounding =
      stochastic ? RoundingMode::Stochastic : RoundingMode::NearestEven;
  options.Seed = static_cast<uint64_t>(opts.getInt(prefix + "seed", 0));
  if (opts.has(prefix + "amax")) {
    options.Amax = opts.getFloat(prefix + "amax", 0.0f);
    char amax[64];
    std::snprintf(amax, sizeof(amax), "0x%08X", floatToBits(*options.Amax));
    p.line("%" + name + "_amax_in = arith.constant " + amax + " : f32");
    operands += " amax(%" + name + "_amax_in)";
  }
  if (prefix == "col-" && opts.has("hadamard"))
    operands += " hadamard(" + std::to_string(hadamardMask(opts)) + ")";
  if (stochastic) {
    p.line("%" + name + "_seed = arith.constant " +
           std::to_string(options.Seed) + " : i64");
    operands += " rounding<stochastic> seed(%" + name + "_seed)";
  }
  return options;
}

/// Expects the library's quantization `want` in the parts %<name>_codes,
/// %<name>_scales, %<name>_amax of an unpacked value (linear scales).
void expectParts(Program &p, const std::string &name,
                 const QuantizedTensor &want) {
  std::string shape = shapeText(want.Rows, want.Cols);
  p.expectEqual(name + "_codes", p.codeBytes(name + "_codes", shape),
                want.Codes, shape, "i8");
  std::string sShape = scaleShape(want, false);
  p.expectEqual(name + "_scales",
                p.bits(name + "_scales", sShape, "f8E4M3FN", "i8"),
                want.Scales, sShape, "i8");
  p.line("%" + name + "_amax_t = tensor.from_elements %" + name +
         "_amax : tensor<1xf32>");
  p.expectEqual(name + "_amax", p.bits(name + "_amax_t", "1", "f32", "i32"),
                toF32Bits({want.Amax}), "1", "i32");
}

/// nvfp4.dual_quantize of an MxK tensor; expected: the library's rowwise
/// quantization of x and its quantization of x^T (transposed here, element
/// by element), after the RHT with --hadamard.
void emitDual(const Options &opts, Program &p) {
  auto [rows, cols] = parsePair(opts.get("shape", "32x64"));
  std::vector<float> data = makeData(rows, cols, opts, 0);
  p.constant("x", toBF16Bits(data), shapeText(rows, cols), "bf16");
  std::string rowOperands, colOperands;
  QuantizeOptions rowOptions = dualPart(opts, p, "", "row", rowOperands);
  QuantizeOptions colOptions = dualPart(opts, p, "col-", "col", colOperands);
  std::vector<float> transposed(data.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      transposed[c * rows + r] = data[r * cols + c];
  if (opts.has("hadamard"))
    transposed = hadamardOrFail(transposed, opts);
  QuantizedTensor row = quantizeOrFail(data, rows, cols, rowOptions);
  QuantizedTensor col = quantizeOrFail(transposed, cols, rows, colOptions);
  std::string rowType = tensorType(rows, cols, BlockShape::Row1x16, false);
  std::string colType = tensorType(cols, rows, BlockShape::Row1x16, false);
  p.line("%row, %col = nvfp4.dual_quantize %x" + rowOperands + " columnwise" +
         colOperands + " : tensor<" + shapeText(rows, cols) + "xbf16> -> " +
         rowType + ", " + colType);
  p.line("%row_codes, %row_scales, %row_amax = nvfp4.unpack %row : " +
         rowType);
  p.line("%col_codes, %col_scales, %col_amax = nvfp4.unpack %col : " +
         colType);
  expectParts(p, "row", row);
  expectParts(p, "col", col);
}

void emitDequantize(const Options &opts, Program &p) {
  auto [rows, cols] = parsePair(opts.get("shape", "32x64"));
  QuantizeOptions options;
  options.Block = parseBlock(opts.get("block", "1x16"));
  std::vector<float> data = makeData(rows, cols, opts, 0);
  QuantizedTensor q = quantizeOrFail(data, rows, cols, options);
  applyDecodeScale(opts, "decode-scale", q);
  std::vector<float> want = check(dequantize(q));
  bool bf16 = opts.get("out", "f32") == "bf16";
  std::string shape = shapeText(rows, cols);
  emitPacked(p, "q", q);
  std::string outType = bf16 ? "bf16" : "f32";
  p.line("%d = nvfp4.dequantize %q : " + tensorTypeOf(q) + " -> tensor<" +
         shape + "x" + outType + ">");
  if (bf16)
    p.expectEqual("values", p.bits("d", shape, "bf16", "i16"), toBF16Bits(want),
                  shape, "i16");
  else
    p.expectEqual("values", p.bits("d", shape, "f32", "i32"), toF32Bits(want),
                  shape, "i32");
}

void emitHadamard(const Options &opts, Program &p) {
  auto [rows, cols] = parsePair(opts.get("shape", "32x64"));
  uint16_t mask = static_cast<uint16_t>(
      opts.getInt("sign-mask", kDefaultHadamardSignMask));
  std::vector<float> data = makeData(rows, cols, opts, 0);
  std::vector<float> want =
      check(hadamardTransform(data.data(), data.size(), mask));
  std::string shape = shapeText(rows, cols);
  p.constant("x", toBF16Bits(data), shape, "bf16");
  p.line("%h = nvfp4.hadamard %x {sign_mask = " + std::to_string(mask) +
         " : i32} : tensor<" + shape + "xbf16>");
  p.expectEqual("values", p.bits("h", shape, "bf16", "i16"), toBF16Bits(want),
                shape, "i16");
}

void emitAmax(const Options &opts, Program &p) {
  auto [rows, cols] = parsePair(opts.get("shape", "32x64"));
  std::vector<float> data = makeData(rows, cols, opts, 0);
  std::string shape = shapeText(rows, cols);
  p.constant("x", toBF16Bits(data), shape, "bf16");
  std::string rht;
  if (opts.has("hadamard")) {
    data = hadamardOrFail(data, opts);
    rht = " hadamard(" + std::to_string(hadamardMask(opts)) + ")";
  }
  p.line("%a = nvfp4.amax %x" + rht + " : tensor<" + shape + "xbf16>");
  p.line("%a_t = tensor.from_elements %a : tensor<1xf32>");
  p.expectEqual("amax", p.bits("a_t", "1", "f32", "i32"),
                toF32Bits({computeAmax(data.data(), data.size())}), "1", "i32");
}

void emitSwizzle(const Options &opts, Program &p) {
  auto [rows, cols] = parsePair(opts.get("shape", "32x64"));
  QuantizeOptions options;
  options.Block = parseBlock(opts.get("block", "1x16"));
  std::vector<float> data = makeData(rows, cols, opts, 0);
  QuantizedTensor q = quantizeOrFail(data, rows, cols, options);
  std::string linear = tensorType(rows, cols, options.Block, false);
  std::string swizzled = tensorType(rows, cols, options.Block, true);
  emitPacked(p, "q", q);
  p.line("%sw = nvfp4.swizzle_scales %q : " + linear + " -> " + swizzled);
  p.line("%c1, %s1, %a1 = nvfp4.unpack %sw : " + swizzled);
  std::string sShape = scaleShape(q, true);
  p.expectEqual("swizzled", p.bits("s1", sShape, "f8E4M3FN", "i8"),
                scalesInLayout(q, true), sShape, "i8");
  p.line("%back = nvfp4.swizzle_scales %sw : " + swizzled + " -> " + linear);
  p.line("%c2, %s2, %a2 = nvfp4.unpack %back : " + linear);
  std::string lShape = scaleShape(q, false);
  p.expectEqual("linear", p.bits("s2", lShape, "f8E4M3FN", "i8"), q.Scales,
                lShape, "i8");
}

void emitMatmul(const Options &opts, Program &p) {
  int64_t m = opts.getInt("m", 32), n = opts.getInt("n", 32),
          k = opts.getInt("k", 64);
  QuantizeOptions a, b;
  a.Block = parseBlock(opts.get("block-a", "1x16"));
  b.Block = parseBlock(opts.get("block-b", "1x16"));
  float alpha = opts.getFloat("alpha", 1.0f);
  QuantizedTensor qa = quantizeOrFail(makeData(m, k, opts, 1), m, k, a);
  QuantizedTensor qb = quantizeOrFail(makeData(n, k, opts, 2), n, k, b);
  applyDecodeScale(opts, "decode-scale-a", qa);
  applyDecodeScale(opts, "decode-scale-b", qb);
  std::vector<float> want = check(scaledMatmul(qa, qb, alpha));
  emitPacked(p, "a", qa);
  emitPacked(p, "b", qb);
  char alphaText[64];
  std::snprintf(alphaText, sizeof(alphaText), "0x%08X", floatToBits(alpha));
  p.line(std::string("%alpha = arith.constant ") + alphaText + " : f32");
  std::string shape = shapeText(m, n);
  if (opts.has("quantize-output")) {
    QuantizeOptions q;
    q.Amax = opts.getFloat("quantize-output", 1.0f);
    std::vector<float> rounded(want.size());
    for (size_t i = 0; i < want.size(); ++i)
      rounded[i] = roundToBF16(want[i]);
    QuantizedTensor wantQ = quantizeOrFail(rounded, m, n, q);
    char amaxText[64];
    std::snprintf(amaxText, sizeof(amaxText), "0x%08X", floatToBits(*q.Amax));
    p.line(std::string("%amax_out = arith.constant ") + amaxText + " : f32");
    std::string type = tensorType(m, n, BlockShape::Row1x16, false);
    p.line("%q = nvfp4.scaled_matmul_quantize %a, %b amax(%amax_out) "
           "alpha(%alpha) : " +
           tensorType(m, k, a.Block, false) + ", " +
           tensorType(n, k, b.Block, false) + " -> " + type);
    expectQuantized(p, "q", type, wantQ);
    return;
  }
  bool outputAmax = opts.has("output-amax");
  p.line(std::string(outputAmax ? "%c, %c_amax" : "%c") +
         " = nvfp4.scaled_matmul %a, %b alpha(%alpha) : " + tensorTypeOf(qa) +
         ", " + tensorTypeOf(qb) + " -> tensor<" + shape + "xf32>" +
         (outputAmax ? ", f32" : ""));
  p.expectEqual("values", p.bits("c", shape, "f32", "i32"), toF32Bits(want),
                shape, "i32");
  if (outputAmax) {
    p.line("%c_amax_t = tensor.from_elements %c_amax : tensor<1xf32>");
    p.expectEqual("amax", p.bits("c_amax_t", "1", "f32", "i32"),
                  toF32Bits({computeAmax(want.data(), want.size())}), "1",
                  "i32");
  }
}

void emitTranspose(const Options &opts, Program &p) {
  auto [rows, cols] = parsePair(opts.get("shape", "32x64"));
  QuantizeOptions options;
  options.Block = BlockShape::Tile16x16;
  std::vector<float> data = makeData(rows, cols, opts, 0);
  QuantizedTensor q = quantizeOrFail(data, rows, cols, options);
  // The expected bytes: the library's quantization of the transposed data
  // (transposed here, element by element), so the check is that
  // transpose(quantize(W)) == quantize(transpose(W)).
  std::vector<float> transposed(data.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      transposed[c * rows + r] = data[r * cols + c];
  QuantizedTensor want = quantizeOrFail(transposed, cols, rows, options);
  emitPacked(p, "q", q);
  std::string from = tensorType(rows, cols, options.Block, false);
  std::string to = tensorType(cols, rows, options.Block, false);
  p.line("%t = nvfp4.transpose %q : " + from + " -> " + to);
  expectQuantized(p, "t", to, want);
}

//===----------------------------------------------------------------------===//
// MX formats (docs/Numerics.md section 11)
//===----------------------------------------------------------------------===//

MXFormat parseFormat(const std::string &text) {
  std::optional<MXFormat> format = parseMXFormat(text);
  if (!format)
    fail("format must be mxfp8_e4m3, mxfp8_e5m2 or mxfp4, got '" + text + "'");
  return *format;
}

bool isMXRequest(const Options &opts) {
  for (const char *key : {"format", "format-a", "format-b"})
    if (opts.get(key, "nvfp4") != "nvfp4")
      return true;
  return false;
}

/// The builtin element type of an MX format.
const char *mxElementType(MXFormat format) {
  switch (format) {
  case MXFormat::MXFP8E4M3:
    return "f8E4M3FN";
  case MXFormat::MXFP8E5M2:
    return "f8E5M2";
  case MXFormat::MXFP4:
    return "f4E2M1FN";
  }
  return "?";
}

std::string mxTensorType(int64_t rows, int64_t cols, MXFormat format,
                         bool swizzled) {
  return "!nvfp4.tensor<" + shapeText(rows, cols) + "x" +
         mxElementType(format) + ", scale = f8E8M0FNU, block = 1x32" +
         (swizzled ? ", layout = swizzled_128x4>" : ">");
}

std::vector<uint8_t> mxScalesInLayout(const MXTensor &q, bool swizzled) {
  if (!swizzled)
    return q.Scales;
  return check(swizzleScales(q.Scales.data(), q.Scales.size(), q.Rows,
                             q.scaleCols()));
}

std::string mxScaleShape(const MXTensor &q, bool swizzled) {
  if (!swizzled)
    return shapeText(q.Rows, q.scaleCols());
  SwizzledScaleShape s = check(getSwizzledScaleShape(q.Rows, q.scaleCols()));
  return shapeText(s.PaddedRows, s.PaddedCols);
}

/// An i8 view of %name, a tensor of `format`'s element codes.
std::string mxCodeBytes(Program &p, const std::string &name,
                        const std::string &shape, MXFormat format) {
  if (format == MXFormat::MXFP4)
    return p.codeBytes(name, shape);
  return p.bits(name, shape, mxElementType(format), "i8");
}

/// Emits %name = nvfp4.pack of the MX tensor `q` (amax part 0). With
/// `opaqueScales` the scale bytes pass through a call of an identity
/// function first, so that no canonicalization sees them as a constant
/// (nvfp4.pack rejects a constant NaN scale, 0xFF, which a program can
/// still compute).
void emitMXPacked(Program &p, const std::string &name, const MXTensor &q,
                  bool opaqueScales = false) {
  std::string shape = shapeText(q.Rows, q.Cols);
  std::string element = mxElementType(q.Format);
  if (q.Format == MXFormat::MXFP4) {
    p.codesConstant(name + "_codes", q.Codes, shape);
  } else {
    p.constant(name + "_codes_raw", q.Codes, shape, "i8");
    p.line("%" + name + "_codes = arith.bitcast %" + name +
           "_codes_raw : tensor<" + shape + "xi8> to tensor<" + shape + "x" +
           element + ">");
  }
  std::string sShape = shapeText(q.Rows, q.scaleCols());
  p.constant(name + "_scales_raw", q.Scales, sShape, "i8");
  std::string raw = name + "_scales_raw";
  if (opaqueScales) {
    std::string t = "tensor<" + sShape + "xi8>";
    p.line("%" + name + "_scales_opaque = func.call @" + name +
           "_opaque(%" + raw + ") : (" + t + ") -> " + t);
    p.function("func.func private @" + name + "_opaque(%s: " + t + ") -> " +
               t + " {\n  return %s : " + t + "\n}\n");
    raw = name + "_scales_opaque";
  }
  p.line("%" + name + "_scales = arith.bitcast %" + raw + " : tensor<" +
         sShape + "xi8> to tensor<" + sShape + "xf8E8M0FNU>");
  p.line("%" + name + "_amax = arith.constant 0.0 : f32");
  p.line("%" + name + " = nvfp4.pack %" + name + "_codes, %" + name +
         "_scales, %" + name + "_amax : " +
         mxTensorType(q.Rows, q.Cols, q.Format, false));
}

void emitMXQuantize(const Options &opts, Program &p) {
  auto [rows, cols] = parsePair(opts.get("shape", "32x64"));
  MXFormat format = parseFormat(opts.get("format", ""));
  bool swizzled = opts.get("layout", "linear") == "swizzled";
  std::vector<float> data = makeData(rows, cols, opts, 0);
  MXTensor q = check(quantizeMX(data.data(), data.size(), rows, cols, format));
  std::string shape = shapeText(rows, cols);
  std::string type = mxTensorType(rows, cols, format, swizzled);
  // --in=f32: an FP32 input (the data are BF16 values either way).
  std::string in = opts.get("in", "bf16");
  if (in == "f32")
    p.constant("x", toF32Bits(data), shape, "f32");
  else if (in == "bf16")
    p.constant("x", toBF16Bits(data), shape, "bf16");
  else
    fail("--in must be bf16 or f32");
  p.line("%q = nvfp4.quantize %x : tensor<" + shape + "x" + in + "> -> " +
         type);
  p.line("%codes, %scales, %amax = nvfp4.unpack %q : " + type);
  p.expectEqual("codes", mxCodeBytes(p, "codes", shape, format), q.Codes,
                shape, "i8");
  std::string sShape = mxScaleShape(q, swizzled);
  p.expectEqual("scales", p.bits("scales", sShape, "f8E8M0FNU", "i8"),
                mxScalesInLayout(q, swizzled), sShape, "i8");
  p.line("%amax_t = tensor.from_elements %amax : tensor<1xf32>");
  p.expectEqual("amax", p.bits("amax_t", "1", "f32", "i32"),
                toF32Bits({0.0f}), "1", "i32");
}

void emitMXDequantize(const Options &opts, Program &p) {
  MXFormat format = parseFormat(opts.get("format", ""));
  bool nanScale = opts.has("nan-scale");
  MXTensor q;
  if (opts.get("data", "random") == "codes") {
    // Every E8M0 byte but NaN with every element code: element (r, c) has
    // code c mod (number of codes); block b of row r has scale
    // (8r + b) mod 255, which runs through all 255 bytes as r does. With
    // --nan-scale, 256 rows and (8r + b) mod 256: NaN (0xFF) too.
    int64_t scaleBytes = nanScale ? 256 : 255;
    int64_t rows = scaleBytes, cols = 256;
    int codes = format == MXFormat::MXFP4 ? 16 : 256;
    q.Rows = rows;
    q.Cols = cols;
    q.Format = format;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c)
        q.Codes.push_back(static_cast<uint8_t>(c % codes));
      for (int64_t b = 0; b < cols / kMXBlockSize; ++b)
        q.Scales.push_back(static_cast<uint8_t>((8 * r + b) % scaleBytes));
    }
  } else {
    auto [rows, cols] = parsePair(opts.get("shape", "32x64"));
    std::vector<float> data = makeData(rows, cols, opts, 0);
    q = check(quantizeMX(data.data(), data.size(), rows, cols, format));
  }
  std::vector<float> want = check(dequantizeMX(q));
  bool bf16 = opts.get("out", "f32") == "bf16";
  std::string shape = shapeText(q.Rows, q.Cols);
  emitMXPacked(p, "q", q, nanScale);
  std::string outType = bf16 ? "bf16" : "f32";
  p.line("%d = nvfp4.dequantize %q : " +
         mxTensorType(q.Rows, q.Cols, format, false) + " -> tensor<" + shape +
         "x" + outType + ">");
  if (bf16 && nanScale)
    p.expectEqualOrBothNaN("values", p.bits("d", shape, "bf16", "i16"),
                           toBF16Bits(want), shape, "bf16", "i16");
  else if (bf16)
    p.expectEqual("values", p.bits("d", shape, "bf16", "i16"), toBF16Bits(want),
                  shape, "i16");
  else
    p.expectEqual("values", p.bits("d", shape, "f32", "i32"), toF32Bits(want),
                  shape, "i32");
}

void emitMXMatmul(const Options &opts, Program &p) {
  int64_t m = opts.getInt("m", 32), n = opts.getInt("n", 32),
          k = opts.getInt("k", 64);
  MXFormat fa = parseFormat(opts.get("format-a", opts.get("format", "")));
  MXFormat fb = parseFormat(opts.get("format-b", opts.get("format", "")));
  float alpha = opts.getFloat("alpha", 1.0f);
  std::vector<float> da = makeData(m, k, opts, 1), db = makeData(n, k, opts, 2);
  MXTensor qa = check(quantizeMX(da.data(), da.size(), m, k, fa));
  MXTensor qb = check(quantizeMX(db.data(), db.size(), n, k, fb));
  std::vector<float> want = check(scaledMatmulMX(qa, qb, alpha));
  emitMXPacked(p, "a", qa);
  emitMXPacked(p, "b", qb);
  char alphaText[64];
  std::snprintf(alphaText, sizeof(alphaText), "0x%08X", floatToBits(alpha));
  p.line(std::string("%alpha = arith.constant ") + alphaText + " : f32");
  std::string shape = shapeText(m, n);
  p.line("%c = nvfp4.scaled_matmul %a, %b alpha(%alpha) : " +
         mxTensorType(m, k, fa, false) + ", " + mxTensorType(n, k, fb, false) +
         " -> tensor<" + shape + "xf32>");
  p.expectEqual("values", p.bits("c", shape, "f32", "i32"), toF32Bits(want),
                shape, "i32");
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    fail("usage: nvfp4-refgen quantize|dual|dequantize|hadamard|amax|swizzle"
         "|matmul|transpose [--key=value...]");
  Options opts;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0)
      fail("unexpected argument '" + arg + "'");
    size_t eq = arg.find('=');
    opts.values[arg.substr(2, eq == std::string::npos ? std::string::npos
                                                      : eq - 2)] =
        eq == std::string::npos ? "" : arg.substr(eq + 1);
  }
  Program program(opts.has("corrupt"));
  std::string command = argv[1];
  if (isMXRequest(opts) && command == "quantize")
    emitMXQuantize(opts, program);
  else if (isMXRequest(opts) && command == "dequantize")
    emitMXDequantize(opts, program);
  else if (isMXRequest(opts) && command == "matmul")
    emitMXMatmul(opts, program);
  else if (isMXRequest(opts))
    fail("--format is supported by quantize, dequantize and matmul");
  else if (command == "quantize")
    emitQuantize(opts, program);
  else if (command == "dual")
    emitDual(opts, program);
  else if (command == "dequantize")
    emitDequantize(opts, program);
  else if (command == "hadamard")
    emitHadamard(opts, program);
  else if (command == "amax")
    emitAmax(opts, program);
  else if (command == "swizzle")
    emitSwizzle(opts, program);
  else if (command == "matmul")
    emitMatmul(opts, program);
  else if (command == "transpose")
    emitTranspose(opts, program);
  else
    fail("unknown command '" + command + "'");
  program.print();
  return 0;
}
