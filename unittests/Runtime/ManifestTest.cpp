//===- ManifestTest.cpp - The runtime's manifest parser -------------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The checked-in manifests under test/Runtime/Inputs were written by
// nvfp4-compile --report (the sm_90a integration cases); the small inline
// ones each break one rule.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Runtime/Runtime.h"

#include "gtest/gtest.h"

#include <cuda.h>

#include <array>
#include <cstring>
#include <string>

using namespace nvfp4::runtime;

namespace {

std::string input(const char *name) {
  return std::string(NVFP4_RUNTIME_TEST_INPUTS) + "/" + name;
}

/// A manifest with the given buffers and kernels arrays (JSON text).
std::string manifest(const std::string &buffers, const std::string &kernels) {
  return R"({"function": "f", "chip": "sm_90a", "buffers": )" + buffers +
         R"(, "kernels": )" + kernels + "}";
}

const char *const kOneBuffer =
    R"([{"element_type": "f32", "elements": 4, "zero_initialized": false,
         "argument": 0}])";

std::string kernelWith(const std::string &params,
                       const std::string &grid = "[1, 1, 1]") {
  return R"([{"name": "k", "grid": )" + grid +
         R"(, "block": [32, 1, 1], "shared_memory_bytes": 0, "params": )" +
         params + "}]";
}

/// Parses `json` and expects failure with `fragment` in the message.
void expectError(const std::string &json, const std::string &fragment,
                 ErrorCode code = ErrorCode::InvalidManifest) {
  Expected<Manifest> m = Manifest::parse(json, "m.json");
  ASSERT_FALSE(m.ok()) << json;
  EXPECT_EQ(m.status().code(), code);
  EXPECT_NE(m.message().find(fragment), std::string::npos)
      << "message: " << m.message() << "\nexpected to contain: " << fragment;
  EXPECT_EQ(m.message().find('\n'), std::string::npos) << "one line";
}

TEST(RuntimeManifest, QuantizeStochasticSample) {
  Expected<Manifest> m = Manifest::load(input("quantize_sr.json"));
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(m->function(), "main");
  EXPECT_EQ(m->chip(), "sm_90a");
  ASSERT_EQ(m->buffers().size(), 4u);
  ASSERT_EQ(m->kernels().size(), 2u);

  // The amax accumulator starts at zero; the outputs are poisoned.
  EXPECT_TRUE(m->buffers()[0].zeroInitialized);
  EXPECT_EQ(m->buffers()[0].elementType, ScalarType::I32);
  EXPECT_FALSE(m->buffers()[2].zeroInitialized);
  EXPECT_EQ(m->buffers()[1].bytes(), 256u * 1024 * 2);

  // Argument 0 is the bf16 input (buffer 1), argument 1 the i64 seed.
  ASSERT_EQ(m->arguments().size(), 2u);
  EXPECT_EQ(m->arguments()[0].kind, ArgumentSpec::Array);
  EXPECT_EQ(m->arguments()[0].buffer, 1);
  EXPECT_EQ(m->arguments()[0].type, ScalarType::BF16);
  EXPECT_EQ(m->arguments()[0].bytes, 524288u);
  EXPECT_EQ(m->arguments()[1].kind, ArgumentSpec::Scalar);
  EXPECT_EQ(m->arguments()[1].type, ScalarType::I64);

  // Results: codes, scales, amax.
  ASSERT_EQ(m->results().size(), 3u);
  EXPECT_EQ(m->results()[0], 2);
  EXPECT_EQ(m->results()[1], 3);
  EXPECT_EQ(m->results()[2], 0);

  const KernelSpec &quantize = m->kernels()[1];
  EXPECT_EQ(quantize.name, "nvfp4_quantize_256x1024xbf16_1x16_sr");
  EXPECT_EQ(quantize.op, "nvfp4.quantize");
  EXPECT_EQ(quantize.grid[0], 64u);
  EXPECT_EQ(quantize.block[0], 256u);
  EXPECT_EQ(quantize.sharedMemoryBytes, 0u);
  ASSERT_EQ(quantize.params.size(), 5u);
  EXPECT_TRUE(quantize.params[0].isPointer());
  EXPECT_EQ(quantize.params[0].buffer, 1);
  EXPECT_FALSE(quantize.params[4].isPointer());
  EXPECT_EQ(quantize.params[4].argument, 1);
  EXPECT_EQ(quantize.params[4].type, ScalarType::I64);
}

TEST(RuntimeManifest, MatmulWithAlphaSample) {
  Expected<Manifest> m = Manifest::load(input("matmul_alpha.json"));
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(m->kernels().size(), 5u);
  ASSERT_EQ(m->arguments().size(), 3u);
  EXPECT_EQ(m->arguments()[1].kind, ArgumentSpec::Array);
  EXPECT_EQ(m->arguments()[1].bytes, 384u * 256 * 2);
  EXPECT_EQ(m->arguments()[2].kind, ArgumentSpec::Scalar);
  EXPECT_EQ(m->arguments()[2].type, ScalarType::F32);
  ASSERT_EQ(m->results().size(), 1u);
  EXPECT_EQ(m->buffers()[m->results()[0]].bytes(), 384u * 4);
  std::string text = m->describe();
  EXPECT_NE(text.find("argument 2: scalar f32"), std::string::npos) << text;
  EXPECT_NE(text.find("result 0: 384 x f32 (1536 bytes), buffer 8"),
            std::string::npos)
      << text;
}

TEST(RuntimeManifest, ConstantsAndFills) {
  std::string json = manifest(
      R"([{"element_type": "i32", "elements": 1, "zero_initialized": false,
           "fill_from_argument": 1, "result": 0},
          {"element_type": "bf16", "elements": 32, "zero_initialized": false,
           "argument": 0}])",
      kernelWith(R"([{"type": "ptr", "buffer": 1}, {"type": "ptr", "buffer": 0},
                     {"type": "f32", "value": "5.000000e-01"},
                     {"type": "i64", "value": "-3"},
                     {"type": "i32", "value": "1.000000e+00"}])"));
  Expected<Manifest> m = Manifest::parse(json);
  ASSERT_TRUE(m.ok()) << m.message();
  // fill_from_argument without a typed use is the f32 amax of quantize.
  EXPECT_EQ(m->arguments()[1].kind, ArgumentSpec::Scalar);
  EXPECT_EQ(m->arguments()[1].type, ScalarType::F32);
  const std::vector<ParamSpec> &p = m->kernels()[0].params;
  ASSERT_TRUE(p[2].value && p[3].value && p[4].value);
  EXPECT_TRUE(p[2].value->isFloat);
  EXPECT_EQ(p[2].value->floatValue, 0.5);
  EXPECT_FALSE(p[3].value->isFloat);
  EXPECT_EQ(p[3].value->intValue, -3);
  EXPECT_EQ(p[4].value->intValue, 1);
}

TEST(RuntimeManifest, FillBits) {
  // A constant fill (the static amax 3.0 of a quantize) and the extremes of
  // the 32-bit range; such buffers are not poisoned first.
  std::string json = manifest(
      R"([{"element_type": "i32", "elements": 1, "zero_initialized": false,
           "fill_bits": 1077936128, "result": 0},
          {"element_type": "f32", "elements": 8, "fill_bits": 4294967295},
          {"element_type": "i32", "elements": 2, "fill_bits": 0},
          {"element_type": "f32", "elements": 2}])",
      "[]");
  Expected<Manifest> m = Manifest::parse(json);
  ASSERT_TRUE(m.ok()) << m.message();
  const std::vector<BufferSpec> &b = m->buffers();
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].fillBits, std::optional<uint32_t>(0x40400000u));
  EXPECT_EQ(b[1].fillBits, std::optional<uint32_t>(0xFFFFFFFFu));
  EXPECT_EQ(b[2].fillBits, std::optional<uint32_t>(0u));
  EXPECT_FALSE(b[3].fillBits);
  EXPECT_FALSE(b[0].zeroInitialized);
  EXPECT_EQ(b[0].fillFromArgument, -1);
  // A constant fill uses no argument.
  EXPECT_TRUE(m->arguments().empty());
  std::string text = m->describe();
  EXPECT_NE(text.find("buffer 0: 1 x i32 (4 bytes), filled with 0x40400000, "
                      "result 0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("buffer 1: 8 x f32 (32 bytes), filled with "
                      "0xffffffff\n"),
            std::string::npos)
      << text;
}

TEST(RuntimeManifest, FillBitsErrors) {
  auto buffer = [](const std::string &fields) {
    return manifest(R"([{"element_type": "i32", "elements": 4, )" + fields +
                        "}]",
                    "[]");
  };
  const char *const notPattern =
      "is not a 32-bit pattern (an integer from 0 to 4294967295)";
  expectError(buffer(R"("fill_bits": 4294967296)"),
              std::string("buffers[0]: \"fill_bits\" 4294967296 ") +
                  notPattern);
  expectError(buffer(R"("fill_bits": 18446744073709551615)"),
              std::string("\"fill_bits\" 18446744073709551615 ") + notPattern);
  expectError(buffer(R"("fill_bits": -1)"),
              std::string("\"fill_bits\" -1 ") + notPattern);
  expectError(buffer(R"("fill_bits": 1.5)"),
              std::string("\"fill_bits\" 1.5 ") + notPattern);
  expectError(buffer(R"("fill_bits": "0x40400000")"),
              std::string("\"fill_bits\" \"0x40400000\" ") + notPattern);
  expectError(buffer(R"("fill_bits": 7, "fill_from_argument": 1)"),
              "buffers[0]: \"fill_bits\" and \"fill_from_argument\" both "
              "fill the buffer");
  expectError(buffer(R"("fill_bits": 7, "zero_initialized": true)"),
              "buffers[0]: \"fill_bits\" and \"zero_initialized\": true "
              "both set the buffer's contents");
  expectError(buffer(R"("fill_bits": 7, "argument": 2)"),
              "buffers[0]: \"fill_bits\" on a buffer that holds argument 2");
  expectError(manifest(R"([{"element_type": "bf16", "elements": 4,
                             "fill_bits": 7}])",
                       "[]"),
              "buffers[0]: \"fill_bits\" fills 32-bit elements, but the "
              "buffer's are bf16");
  expectError(manifest(R"([{"element_type": "i64", "elements": 4,
                             "fill_bits": 7}])",
                       "[]"),
              "\"fill_bits\" fills 32-bit elements, but the buffer's are "
              "i64");
}

TEST(RuntimeManifest, Errors) {
  expectError("{", "m.json: not valid JSON");
  expectError("[]", "not a JSON object");
  expectError(R"({"kernels": []})", "missing \"buffers\" array");
  expectError(R"({"buffers": []})", "missing \"kernels\" array");
  expectError(manifest(R"([{"element_type": "f7", "elements": 1}])", "[]"),
              "buffers[0]: unknown element_type 'f7'");
  expectError(manifest(R"([{"element_type": "f32", "elements": -1}])", "[]"),
              "buffers[0]: \"elements\" must be a non-negative integer");
  expectError(
      manifest(R"([{"element_type": "f32", "elements": 281474976710657}])",
               "[]"),
      "more than 2^47");
  expectError(manifest(R"([{"element_type": "f32", "elements": 1,
                             "zero_initialized": 1}])",
                       "[]"),
              "\"zero_initialized\" must be true or false");
  expectError(manifest(kOneBuffer, kernelWith(R"([{"type": "ptr",
                                                  "buffer": 3}])")),
              "kernels[0] (k): params[0]: buffer 3 does not exist (there are "
              "1 buffers)");
  expectError(manifest(kOneBuffer, kernelWith("[]", "[-1, 1, 1]")),
              "grid [-1, 1, 1] is not static");
  expectError(manifest(kOneBuffer, kernelWith("[]", "[1, 1]")),
              "\"grid\" must be an array of 3 integers");
  expectError(manifest(kOneBuffer, kernelWith(R"([{"type": "i64"}])")),
              "scalar parameter with neither \"argument\" nor \"value\"");
  expectError(manifest(kOneBuffer, kernelWith(R"([{"type": "f16",
                                                  "argument": 1}])")),
              "scalar parameters of type f16 are not supported");
  expectError(manifest(kOneBuffer, kernelWith(R"([{"type": "i64",
                                                  "argument": 0}])")),
              "argument 0 is a scalar here but fills buffer 0");
  expectError(manifest(kOneBuffer, kernelWith(R"([{"type": "i64",
                                                  "value": "x"}])")),
              "\"value\": 'x' is not an integer (for i64)");
  expectError(manifest(R"([{"element_type": "f32", "elements": 1, "result": 0},
                            {"element_type": "f32", "elements": 1, "result": 0}])",
                       "[]"),
              "buffers[1]: result 0 is already buffer 0");
  expectError(
      manifest(R"([{"element_type": "f32", "elements": 1, "argument": 0},
                            {"element_type": "f32", "elements": 1, "argument": 0}])",
               "[]"),
      "argument 0 already fills buffer 0");
  expectError(manifest(R"([{"element_type": "i8", "elements": 1,
                             "fill_from_argument": 0}])",
                       "[]"),
              "fill_from_argument 0 is a f32 scalar, which cannot fill i8");
  expectError(manifest(kOneBuffer,
                       R"([{"name": "k", "grid": [1, 1, 1], "block": [1, 1, 1],
                            "shared_memory_bytes": -1, "params": []}])"),
              "shared_memory_bytes -1 is not static");
  expectError(manifest(kOneBuffer, R"([{"grid": [1, 1, 1]}])"),
              "kernels[0]: missing \"name\"");
  // Indices size tables: a huge one is an error, not an allocation.
  expectError(manifest(R"([{"element_type": "f32", "elements": 1,
                             "result": 1000000000000}])",
                       "[]"),
              "buffers[0]: \"result\" 1000000000000 is out of range");
  expectError(manifest(kOneBuffer, kernelWith(R"([{"type": "i64",
                                                  "argument": 99999999}])")),
              "\"argument\" 99999999 is out of range");
}

//===----------------------------------------------------------------------===//
// TMA tensor maps
//===----------------------------------------------------------------------===//

TensorMapSpec tensorMap(ScalarType type, std::vector<int64_t> dims,
                        std::vector<int64_t> box,
                        TensorMapSwizzle swizzle = TensorMapSwizzle::None) {
  TensorMapSpec spec;
  spec.elementType = type;
  spec.buffer = 0;
  spec.dims = std::move(dims);
  spec.box = std::move(box);
  spec.swizzle = swizzle;
  return spec;
}

/// computeTensorMapEncoding fails with `fragment` in its message.
void expectEncodingError(const TensorMapSpec &spec,
                         const std::string &fragment) {
  Expected<TensorMapEncoding> e = computeTensorMapEncoding(spec);
  ASSERT_FALSE(e.ok()) << "expected: " << fragment;
  EXPECT_EQ(e.status().code(), ErrorCode::InvalidManifest);
  EXPECT_NE(e.message().find(fragment), std::string::npos)
      << "message: " << e.message() << "\nexpected to contain: " << fragment;
}

// The example of the manifest format: [2, 200, 512] bytes in 1x128x128
// boxes, 128-byte swizzle.
TEST(RuntimeTensorMap, EncodingOfABatchedByteTensor) {
  TensorMapSpec spec = tensorMap(ScalarType::I8, {2, 200, 512}, {1, 128, 128},
                                 TensorMapSwizzle::B128);
  spec.l2Promotion = TensorMapL2Promotion::B256;
  Expected<TensorMapEncoding> e = computeTensorMapEncoding(spec);
  ASSERT_TRUE(e.ok()) << e.message();
  EXPECT_EQ(e->dataType, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(e->rank, 3u);
  EXPECT_EQ(e->globalDim[0], 512u);
  EXPECT_EQ(e->globalDim[1], 200u);
  EXPECT_EQ(e->globalDim[2], 2u);
  EXPECT_EQ(e->globalStrides[0], 512u);
  EXPECT_EQ(e->globalStrides[1], 200u * 512u);
  EXPECT_EQ(e->boxDim[0], 128u);
  EXPECT_EQ(e->boxDim[1], 128u);
  EXPECT_EQ(e->boxDim[2], 1u);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(e->elementStrides[i], 1u);
  EXPECT_EQ(e->interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
  EXPECT_EQ(e->swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(e->l2Promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  EXPECT_EQ(e->oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

TEST(RuntimeTensorMap, ElementTypesAndStrides) {
  struct Case {
    ScalarType type;
    int dataType;
  } cases[] = {
      {ScalarType::I8, CU_TENSOR_MAP_DATA_TYPE_UINT8},
      {ScalarType::F8E4M3FN, CU_TENSOR_MAP_DATA_TYPE_UINT8},
      {ScalarType::I16, CU_TENSOR_MAP_DATA_TYPE_UINT16},
      {ScalarType::BF16, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16},
      {ScalarType::F16, CU_TENSOR_MAP_DATA_TYPE_FLOAT16},
      {ScalarType::I32, CU_TENSOR_MAP_DATA_TYPE_INT32},
      {ScalarType::F32, CU_TENSOR_MAP_DATA_TYPE_FLOAT32},
      {ScalarType::I64, CU_TENSOR_MAP_DATA_TYPE_INT64},
      {ScalarType::F64, CU_TENSOR_MAP_DATA_TYPE_FLOAT64},
  };
  for (const Case &c : cases) {
    // [3, 40, 64] elements in [1, 8, 16] boxes: 16 elements are 16 bytes
    // or more for every type.
    Expected<TensorMapEncoding> e =
        computeTensorMapEncoding(tensorMap(c.type, {3, 40, 64}, {1, 8, 16}));
    ASSERT_TRUE(e.ok()) << scalarTypeName(c.type) << ": " << e.message();
    uint64_t size = scalarTypeSize(c.type);
    EXPECT_EQ(e->dataType, c.dataType) << scalarTypeName(c.type);
    EXPECT_EQ(e->globalStrides[0], 64 * size) << scalarTypeName(c.type);
    EXPECT_EQ(e->globalStrides[1], 40 * 64 * size) << scalarTypeName(c.type);
  }
  // Rank 1 has no strides; rank 5 has four.
  Expected<TensorMapEncoding> one =
      computeTensorMapEncoding(tensorMap(ScalarType::BF16, {4096}, {256}));
  ASSERT_TRUE(one.ok()) << one.message();
  EXPECT_EQ(one->rank, 1u);
  EXPECT_EQ(one->globalDim[0], 4096u);
  EXPECT_EQ(one->boxDim[0], 256u);
  Expected<TensorMapEncoding> five = computeTensorMapEncoding(
      tensorMap(ScalarType::I8, {2, 3, 4, 5, 16}, {1, 1, 2, 5, 16}));
  ASSERT_TRUE(five.ok()) << five.message();
  EXPECT_EQ(five->rank, 5u);
  uint64_t strides[] = {16, 5 * 16, 4 * 5 * 16, 3 * 4 * 5 * 16};
  uint32_t boxes[] = {16, 5, 2, 1, 1};
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(five->globalStrides[i], strides[i]) << i;
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(five->boxDim[i], boxes[i]) << i;
  // The swizzle spans: a 64-byte inner box fits 64B but not 32B.
  EXPECT_TRUE(computeTensorMapEncoding(tensorMap(ScalarType::BF16, {64, 64},
                                                 {8, 32},
                                                 TensorMapSwizzle::B64))
                  .ok());
  TensorMapSpec nan = tensorMap(ScalarType::BF16, {64, 64}, {8, 32});
  nan.oobFill = TensorMapOobFill::NanRequestZeroFma;
  Expected<TensorMapEncoding> n = computeTensorMapEncoding(nan);
  ASSERT_TRUE(n.ok()) << n.message();
  EXPECT_EQ(n->oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
}

TEST(RuntimeTensorMap, EncodingErrors) {
  expectEncodingError(tensorMap(ScalarType::I8, {}, {}),
                      "\"dims\" has 0 entries; a tensor map has 1 to 5");
  expectEncodingError(
      tensorMap(ScalarType::I8, {1, 1, 1, 1, 1, 16}, {1, 1, 1, 1, 1, 16}),
      "\"dims\" has 6 entries");
  expectEncodingError(tensorMap(ScalarType::I8, {64, 64}, {64}),
                      "\"box\" has 1 entries, \"dims\" 2");
  expectEncodingError(tensorMap(ScalarType::I8, {64, 0}, {64, 16}),
                      "dims[1] = 0 is not in [1, 2^32]");
  expectEncodingError(
      tensorMap(ScalarType::I8, {(int64_t(1) << 32) + 1, 16}, {1, 16}),
      "dims[0] = 4294967297 is not in [1, 2^32]");
  expectEncodingError(tensorMap(ScalarType::I8, {64, 64}, {0, 64}),
                      "box[0] = 0 is not in [1, 256]");
  expectEncodingError(tensorMap(ScalarType::I8, {512, 512}, {257, 16}),
                      "box[0] = 257 is not in [1, 256]");
  expectEncodingError(tensorMap(ScalarType::I8, {3, 10}, {1, 16}),
                      "the byte stride of dims[0] is 10; TMA needs a multiple "
                      "of 16");
  expectEncodingError(
      tensorMap(ScalarType::I8, {2, int64_t(1) << 32, 512}, {1, 1, 16}),
      "the byte stride of dims[0] is 2^40 or more");
  expectEncodingError(tensorMap(ScalarType::BF16, {64, 64}, {8, 4}),
                      "the inner box dimension box[1] = 4 is 8 bytes; TMA "
                      "needs a multiple of 16");
  expectEncodingError(
      tensorMap(ScalarType::I8, {64, 256}, {64, 256}, TensorMapSwizzle::B128),
      "box[1] = 256 is 256 bytes, more than the 128B swizzle span");
  expectEncodingError(
      tensorMap(ScalarType::BF16, {64, 64}, {8, 32}, TensorMapSwizzle::B32),
      "box[1] = 32 is 64 bytes, more than the 32B swizzle span");
  TensorMapSpec nan = tensorMap(ScalarType::I8, {64, 64}, {64, 64});
  nan.oobFill = TensorMapOobFill::NanRequestZeroFma;
  expectEncodingError(nan, "oob_fill \"nan\" needs a floating-point element "
                           "type, not i8");
  expectEncodingError(tensorMap(ScalarType::I1, {64, 64}, {64, 64}),
                      "tensor maps of i1 elements are not supported");
  expectEncodingError(tensorMap(ScalarType::Index, {64, 64}, {8, 8}),
                      "tensor maps of index elements are not supported");
}

TEST(RuntimeTensorMap, ManifestSample) {
  Expected<Manifest> m = Manifest::load(input("gemm_tma.json"));
  ASSERT_TRUE(m.ok()) << m.message();
  const std::vector<ParamSpec> &p = m->kernels()[0].params;
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[0].kind, ParamSpec::TensorMap);
  EXPECT_EQ(p[1].kind, ParamSpec::TensorMap);
  EXPECT_EQ(p[2].kind, ParamSpec::Pointer);
  EXPECT_EQ(p[3].kind, ParamSpec::TensorMap);
  EXPECT_EQ(p[4].kind, ParamSpec::Scalar);
  ASSERT_TRUE(p[0].tensorMap && p[1].tensorMap && p[3].tensorMap);
  EXPECT_FALSE(p[2].tensorMap);

  const TensorMapSpec &a = *p[0].tensorMap;
  EXPECT_EQ(a.buffer, 0);
  EXPECT_EQ(p[0].buffer, 0);
  EXPECT_EQ(a.elementType, ScalarType::I8);
  EXPECT_EQ(a.dims, (std::vector<int64_t>{2, 200, 512}));
  EXPECT_EQ(a.box, (std::vector<int64_t>{1, 128, 128}));
  EXPECT_EQ(a.swizzle, TensorMapSwizzle::B128);
  EXPECT_EQ(a.l2Promotion, TensorMapL2Promotion::B256);
  EXPECT_EQ(a.oobFill, TensorMapOobFill::Zero);

  // "ui8" is i8; absent strings take their defaults.
  const TensorMapSpec &b = *p[1].tensorMap;
  EXPECT_EQ(b.buffer, 1);
  EXPECT_EQ(b.elementType, ScalarType::I8);
  EXPECT_EQ(b.swizzle, TensorMapSwizzle::B128);
  EXPECT_EQ(b.l2Promotion, TensorMapL2Promotion::None);
  EXPECT_EQ(b.oobFill, TensorMapOobFill::Zero);

  const TensorMapSpec &c = *p[3].tensorMap;
  EXPECT_EQ(c.elementType, ScalarType::F32);
  EXPECT_EQ(c.swizzle, TensorMapSwizzle::None);
  EXPECT_EQ(c.l2Promotion, TensorMapL2Promotion::B64);
  EXPECT_EQ(c.oobFill, TensorMapOobFill::NanRequestZeroFma);

  // Tensor maps use buffers, not arguments: the arguments are the two
  // arrays only.
  ASSERT_EQ(m->arguments().size(), 2u);
  EXPECT_EQ(m->arguments()[0].kind, ArgumentSpec::Array);
  EXPECT_EQ(m->arguments()[1].kind, ArgumentSpec::Array);

  std::string text = m->describe();
  EXPECT_NE(text.find("tensormap buffer 0 [2x200x512 i8, box 1x128x128, "
                      "swizzle 128B, l2 256B, oob zero]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  param 0: cuTensorMapEncodeTiled(UINT8, rank 3, "
                      "globalDim [512, 200, 2], globalStrides [512, 102400], "
                      "boxDim [128, 128, 1], elementStrides [1, 1, 1], "
                      "INTERLEAVE_NONE, SWIZZLE_128B, L2_PROMOTION_L2_256B, "
                      "FLOAT_OOB_FILL_NONE)"),
            std::string::npos)
      << text;
}

/// A manifest of one i8 buffer of 8192 elements and one kernel whose only
/// parameter is a tensor map with the given fields (JSON, without braces).
std::string tensorMapManifest(const std::string &fields) {
  return manifest(R"([{"element_type": "i8", "elements": 8192}])",
                  kernelWith(R"([{"type": "tensormap", )" + fields + "}]"));
}

TEST(RuntimeTensorMap, ManifestErrors) {
  const std::string ok = R"("buffer": 0, "element_type": "i8",
                            "dims": [2, 64, 64], "box": [1, 64, 64])";
  ASSERT_TRUE(Manifest::parse(tensorMapManifest(ok)).ok());
  expectError(tensorMapManifest(R"("buffer": 0, "element_type": "i8",
                                   "dims": [4, 64, 64], "box": [1, 64, 64])"),
              "kernels[0] (k): params[0]: tensormap dims [4, 64, 64] hold "
              "16384 x i8, but buffer 0 is 8192 x i8 (8192 bytes)");
  // The same bytes as another element size still have to match in bytes.
  expectError(tensorMapManifest(R"("buffer": 0, "element_type": "bf16",
                                   "dims": [2, 64, 64], "box": [1, 64, 64])"),
              "tensormap dims [2, 64, 64] hold 8192 x bf16, but buffer 0 is "
              "8192 x i8");
  expectError(tensorMapManifest(ok + R"(, "swizzle": "256B")"),
              "params[0]: unknown swizzle '256B' (expected \"none\", \"32B\", "
              "\"64B\", \"128B\")");
  expectError(tensorMapManifest(ok + R"(, "swizzle": 128)"),
              "\"swizzle\" must be one of");
  expectError(tensorMapManifest(ok + R"(, "l2_promotion": "32B")"),
              "unknown l2_promotion '32B' (expected \"none\", \"64B\", "
              "\"128B\", \"256B\")");
  expectError(tensorMapManifest(ok + R"(, "oob_fill": "ones")"),
              "unknown oob_fill 'ones' (expected \"zero\", \"nan\")");
  expectError(tensorMapManifest(R"("buffer": 0, "element_type": "i8",
                                   "dims": [2, 64, 64], "box": [64, 64])"),
              "params[0]: tensormap: \"box\" has 2 entries, \"dims\" 3");
  expectError(tensorMapManifest(R"("buffer": 0, "element_type": "i8",
                                   "box": [64, 64])"),
              "\"dims\" must be an array of integers");
  expectError(tensorMapManifest(R"("buffer": 0, "element_type": "i8",
                                   "dims": [2, 64, 64], "box": [1, "a", 64])"),
              "\"box\" must be an array of integers");
  expectError(tensorMapManifest(R"("element_type": "i8", "dims": [8192],
                                   "box": [64])"),
              "tensormap parameter without \"buffer\"");
  expectError(tensorMapManifest(R"("buffer": 1, "element_type": "i8",
                                   "dims": [8192], "box": [64])"),
              "buffer 1 does not exist (there are 1 buffers)");
  expectError(tensorMapManifest(R"("buffer": 0, "element_type": "u4",
                                   "dims": [8192], "box": [64])"),
              "unknown element_type 'u4'");
  expectError(tensorMapManifest(R"("buffer": 0, "element_type": "i1",
                                   "dims": [8192], "box": [64])"),
              "tensormap: tensor maps of i1 elements are not supported");
  expectError(tensorMapManifest(R"("buffer": 0, "element_type": "i8",
                                   "dims": [64, 128], "box": [64, 128],
                                   "swizzle": "64B")"),
              "more than the 64B swizzle span");
  expectError(tensorMapManifest(R"("buffer": 0, "element_type": "i8",
      "dims": [4294967296, 4294967296, 4294967296, 1, 16],
      "box": [1, 1, 1, 1, 16])"),
              "the byte stride of dims[0] is 2^40 or more");
  // A product past every buffer size saturates instead of wrapping.
  expectError(tensorMapManifest(R"("buffer": 0, "element_type": "i8",
      "dims": [4294967296, 4294967296, 16], "box": [1, 1, 16])"),
              "hold >= ");
}

// The structural mistakes of a hand-written or truncated manifest, one
// message each (the remaining ones of Manifest::parse).
TEST(RuntimeManifest, StructureErrors) {
  expectError(manifest("[3]", "[]"), "m.json: buffers[0]: not an object");
  expectError(manifest(R"([{"elements": 1}])", "[]"),
              "buffers[0]: missing \"element_type\"");
  expectError(manifest(R"([{"element_type": "f32"}])", "[]"),
              "buffers[0]: \"elements\" must be a non-negative integer");
  expectError(manifest(kOneBuffer, "[null]"),
              "m.json: kernels[0]: not an object");
  expectError(manifest(kOneBuffer, R"([{"name": "k", "grid": [1, 1, 1],
                                        "block": [32, "x", 1],
                                        "params": []}])"),
              "kernels[0] (k): \"block\" must be an array of 3 integers");
  expectError(manifest(kOneBuffer, R"([{"name": "k", "grid": [1, 1, 1],
                                        "block": [32, 1, 1],
                                        "shared_memory_bytes": "big",
                                        "params": []}])"),
              "kernels[0] (k): \"shared_memory_bytes\" must be an integer");
  expectError(manifest(kOneBuffer, R"([{"name": "k", "grid": [1, 1, 1],
                                        "block": [32, 1, 1]}])"),
              "kernels[0] (k): missing \"params\" array");
  expectError(manifest(kOneBuffer, kernelWith("[7]")),
              "kernels[0] (k): params[0]: not an object");
  expectError(manifest(kOneBuffer, kernelWith(R"([{"buffer": 0}])")),
              "kernels[0] (k): params[0]: missing \"type\"");
  expectError(manifest(kOneBuffer, kernelWith(R"([{"type": "ptr"}])")),
              "kernels[0] (k): params[0]: pointer parameter without "
              "\"buffer\"");
  expectError(manifest(kOneBuffer, kernelWith(R"([{"type": "ptr",
                                                  "element_type": "f3",
                                                  "buffer": 0}])")),
              "kernels[0] (k): params[0]: unknown element_type 'f3'");
  expectError(manifest(kOneBuffer, kernelWith(R"([{"type": "i64",
                                                  "value": [1]}])")),
              "kernels[0] (k): params[0]: \"value\" must be a string or a "
              "number");
  expectError(manifest(kOneBuffer, kernelWith(R"([{"type": "q8",
                                                  "value": 1}])")),
              "kernels[0] (k): params[0]: unknown type 'q8'");
}

TEST(RuntimeManifest, MissingFile) {
  Expected<Manifest> m = Manifest::load(input("does-not-exist.json"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::Io);
  EXPECT_NE(m.message().find("cannot read manifest"), std::string::npos);
}

// Issue 16 C2: a manifest nested tens of thousands deep overflowed the
// parser's stack; the depth is checked before llvm::json parses it.
TEST(RuntimeManifest, NestingDepthLimit) {
  std::string deep = manifest("[]", "[]");
  deep.insert(deep.size() - 1, R"(, "x": )" + std::string(35000, '[') +
                                   std::string(35000, ']'));
  expectError(deep, "nested more than 64 levels deep");
  // Brackets inside strings do not count, escaped quotes do not end them.
  std::string quoted = manifest("[]", "[]");
  quoted.insert(quoted.size() - 1,
                R"(, "x": ")" + std::string(200, '[') + R"(\"]")");
  EXPECT_TRUE(Manifest::parse(quoted).ok());
  std::string atLimit = manifest("[]", "[]");
  atLimit.insert(atLimit.size() - 1, R"(, "x": )" + std::string(63, '[') +
                                         std::string(63, ']'));
  EXPECT_TRUE(Manifest::parse(atLimit).ok()) << "64 levels with the top";
}

// Issue 16 P8: /dev/zero (or any device, FIFO, directory) is not read.
TEST(RuntimeManifest, OnlyRegularFiles) {
  Expected<Manifest> m = Manifest::load("/dev/zero");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::Io);
  EXPECT_NE(m.message().find("'/dev/zero': not a regular file"),
            std::string::npos)
      << m.message();
  EXPECT_FALSE(Manifest::load(NVFP4_RUNTIME_TEST_INPUTS).ok());
  std::string huge(kMaxManifestBytes + 1, ' ');
  expectError(huge, "bytes; a manifest may have at most");
}

// Issue 16 W7: a pointer parameter's view must fit in its buffer.
TEST(RuntimeManifest, PointerViewLargerThanBuffer) {
  const char *buffers =
      R"([{"element_type": "bf16", "elements": 8, "argument": 0}])";
  expectError(manifest(buffers, kernelWith(R"([{"type": "ptr", "buffer": 0,
                  "element_type": "f64", "elements": 1000000000000}])")),
              "params[0]: the kernel views buffer 0 as 1000000000000 x f64, "
              "more than its 8 x bf16 (16 bytes)");
  expectError(manifest(buffers, kernelWith(R"([{"type": "ptr", "buffer": 0,
                  "element_type": "f32", "elements": 5}])")),
              "views buffer 0 as 5 x f32");
  expectError(manifest(buffers, kernelWith(R"([{"type": "ptr", "buffer": 0,
                  "elements": -1}])")),
              "\"elements\" must be a non-negative integer");
  // The same bytes under another type (an f32 amax read as i32), or a
  // view without "elements", are fine.
  EXPECT_TRUE(Manifest::parse(manifest(buffers, kernelWith(R"([{"type": "ptr",
                  "buffer": 0, "element_type": "i32", "elements": 4}])")))
                  .ok());
  EXPECT_TRUE(Manifest::parse(manifest(buffers, kernelWith(R"([{"type": "ptr",
                  "buffer": 0, "element_type": "f64"}])")))
                  .ok());
  EXPECT_TRUE(Manifest::parse(manifest(buffers, kernelWith(R"([{"type": "ptr",
                  "buffer": 0, "elements": 8}])")))
                  .ok());
}

// "host_computation": parsed, described, and refused by checkRunnable.
TEST(RuntimeManifest, HostComputation) {
  std::string json = manifest(kOneBuffer, "[]");
  json.insert(json.size() - 1,
              R"(, "host_computation": [{"op": "linalg.transpose",
                  "location": "m.mlir:4:9"}, {"op": "arith.addf",
                  "location": "m.mlir:5:3"}])");
  Expected<Manifest> m = Manifest::parse(json, "m.json");
  ASSERT_TRUE(m.ok()) << m.message();
  ASSERT_EQ(m->hostComputation().size(), 2u);
  EXPECT_EQ(m->hostComputation()[0].op, "linalg.transpose");
  EXPECT_EQ(m->hostComputation()[1].location, "m.mlir:5:3");
  Status runnable = m->checkRunnable();
  ASSERT_FALSE(runnable.ok());
  EXPECT_EQ(runnable.code(), ErrorCode::InvalidManifest);
  EXPECT_EQ(runnable.message(),
            "m.json: @f leaves computation on the host that no kernel "
            "performs (2 ops: linalg.transpose at m.mlir:4:9, arith.addf at "
            "m.mlir:5:3); its kernels alone would run on buffers nobody "
            "wrote, so the runtime does not run this bundle");
  EXPECT_NE(m->describe().find("host computation no kernel performs (the "
                               "runtime refuses to run this bundle): 2 ops\n"
                               "  linalg.transpose at m.mlir:4:9\n"),
            std::string::npos)
      << m->describe();

  std::string empty = manifest(kOneBuffer, "[]");
  empty.insert(empty.size() - 1, R"(, "host_computation": [])");
  ASSERT_TRUE(Manifest::parse(empty).ok());
  EXPECT_TRUE(Manifest::parse(empty)->checkRunnable().ok());
  EXPECT_TRUE(Manifest::parse(manifest(kOneBuffer, "[]"))->checkRunnable().ok());

  auto withHost = [](const std::string &value) {
    std::string text = manifest(kOneBuffer, "[]");
    text.insert(text.size() - 1, R"(, "host_computation": )" + value);
    return text;
  };
  expectError(withHost("{}"), "\"host_computation\" must be an array");
  expectError(withHost("[3]"), "host_computation[0]: not an object");
  expectError(withHost(R"([{"location": "a"}])"),
              "host_computation[0]: \"op\" must be a non-empty string");
  expectError(withHost(R"([{"op": "x", "location": 3}])"),
              "host_computation[0]: \"location\" must be a string");
}

// SplitMix64's published first outputs for seed 0 (an independent check
// of the mixing the runtime redoes for "seed_stream" parameters).
TEST(RuntimeManifest, StreamSeeds) {
  EXPECT_EQ(deriveStreamSeed(0, 0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(deriveStreamSeed(0, 1), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(deriveStreamSeed(0, 2), 0x06C45D188009454Full);

  const char *buffers =
      R"([{"element_type": "bf16", "elements": 8, "argument": 0}])";
  Expected<Manifest> m = Manifest::parse(manifest(buffers, kernelWith(
      R"([{"type": "ptr", "buffer": 0},
          {"type": "i64", "argument": 1, "seed_stream": 3}])")));
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(m->kernels()[0].params[1].seedStream, 3u);
  EXPECT_EQ(m->arguments()[1].kind, ArgumentSpec::Scalar);
  EXPECT_NE(m->describe().find("i64 stream seed 3 of argument 1"),
            std::string::npos);
  expectError(manifest(buffers, kernelWith(R"([{"type": "i64",
                  "value": "1", "seed_stream": 0}])")),
              "\"seed_stream\" without \"argument\"");
  expectError(manifest(buffers, kernelWith(R"([{"type": "i32",
                  "argument": 1, "seed_stream": 0}])")),
              "\"seed_stream\" needs an i64 parameter, not i32");
  expectError(manifest(buffers, kernelWith(R"([{"type": "i64",
                  "argument": 1, "seed_stream": -2}])")),
              "\"seed_stream\" must be a non-negative integer");
}

TEST(RuntimeScalars, Parse) {
  auto intOf = [](ScalarType t, const char *text) {
    Expected<ScalarValue> v = parseScalarValue(t, text);
    EXPECT_TRUE(v.ok()) << text << ": " << v.message();
    return v.ok() ? v->intValue : 0;
  };
  EXPECT_EQ(intOf(ScalarType::I64, "42"), 42);
  EXPECT_EQ(intOf(ScalarType::I64, "-7"), -7);
  EXPECT_EQ(intOf(ScalarType::I64, "0x123456789ABCDEF0"),
            int64_t(0x123456789ABCDEF0));
  EXPECT_EQ(intOf(ScalarType::I64, "18446744073709551615"), -1);
  EXPECT_EQ(intOf(ScalarType::I32, "3.0"), 3);
  EXPECT_FALSE(parseScalarValue(ScalarType::I64, "1.5").ok());
  EXPECT_FALSE(parseScalarValue(ScalarType::I64, "").ok());
  EXPECT_FALSE(parseScalarValue(ScalarType::I64, "12abc").ok());

  Expected<ScalarValue> f = parseScalarValue(ScalarType::F32, "0.25");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->isFloat);
  EXPECT_EQ(f->floatValue, 0.25);
  EXPECT_FALSE(parseScalarValue(ScalarType::F32, "half").ok());
}

TEST(RuntimeScalars, Types) {
  EXPECT_EQ(parseScalarType("bf16"), ScalarType::BF16);
  EXPECT_EQ(parseScalarType("f8E4M3FN"), ScalarType::F8E4M3FN);
  EXPECT_EQ(parseScalarType("f4E2M1FN"), std::nullopt);
  EXPECT_EQ(scalarTypeSize(ScalarType::BF16), 2u);
  EXPECT_EQ(scalarTypeSize(ScalarType::Index), 8u);
  EXPECT_STREQ(scalarTypeName(ScalarType::I1), "i1");
}

TEST(RuntimeImages, Kinds) {
  EXPECT_EQ(detectImageKind(std::string("\x7f"
                                        "ELF\x02\x01",
                                        6)),
            ImageKind::Cubin);
  EXPECT_EQ(detectImageKind(std::string("\x50\xed\x55\xba\x01\x00", 6)),
            ImageKind::Fatbin);
  EXPECT_EQ(detectImageKind("//\n.version 8.0\n.target sm_90a\n"),
            ImageKind::PTX);
  EXPECT_EQ(detectImageKind("{\"buffers\": []}"), ImageKind::Unknown);
  EXPECT_EQ(detectImageKind(""), ImageKind::Unknown);
}

TEST(RuntimeStats, Summary) {
  RunStats stats;
  EXPECT_EQ(stats.median(), 0.0f);
  stats.milliseconds = {4.0f, 1.0f, 3.0f, 2.0f};
  EXPECT_EQ(stats.min(), 1.0f);
  EXPECT_EQ(stats.median(), 2.5f);
  EXPECT_EQ(stats.mean(), 2.5f);
}

TEST(RuntimeStats, LaunchTimes) {
  RunStats stats;
  EXPECT_EQ(stats.launchMedian(0), 0.0f);
  EXPECT_EQ(stats.launchMin(0), 0.0f);
  // Three runs of two launches: per launch, the median and the minimum
  // over the runs.
  stats.launchMilliseconds = {{3.0f, 0.5f}, {1.0f, 0.25f}, {2.0f, 1.0f}};
  EXPECT_EQ(stats.launchMedian(0), 2.0f);
  EXPECT_EQ(stats.launchMin(0), 1.0f);
  EXPECT_EQ(stats.launchMedian(1), 0.5f);
  EXPECT_EQ(stats.launchMin(1), 0.25f);
  EXPECT_EQ(stats.launchMedian(2), 0.0f); // no such launch
}

} // namespace

// CUTLASS's small-tensor workaround (include/cute/atom/copy_traits_sm90_tma.hpp
// at commit 7107b055, lines 1061-1070): drivers <= 13010, tensors spanning
// < 131072 bytes, bit 21 of 64-bit word 1 cleared; nothing else changes.
TEST(RuntimeTensorMap, SmallTensorWorkaroundClearsBit21OfWord1) {
  // 2 x 200 x 512 bytes = 204800: not small.
  TensorMapSpec big = tensorMap(ScalarType::I8, {2, 200, 512}, {1, 128, 128},
                                TensorMapSwizzle::B128);
  Expected<TensorMapEncoding> large = computeTensorMapEncoding(big);
  ASSERT_TRUE(large.ok()) << large.message();
  EXPECT_EQ(tensorMapSpanBytes(*large), 204800u);
  // 1 x 128 x 512 bytes = 65536: small.
  TensorMapSpec little = tensorMap(ScalarType::I8, {1, 128, 512},
                                   {1, 128, 128}, TensorMapSwizzle::B128);
  Expected<TensorMapEncoding> small = computeTensorMapEncoding(little);
  ASSERT_TRUE(small.ok()) << small.message();
  EXPECT_EQ(tensorMapSpanBytes(*small), 65536u);
  // 256 x 256 f16 = 131072 bytes: exactly the limit, not below it.
  TensorMapSpec edge = tensorMap(ScalarType::F16, {256, 256}, {64, 64},
                                 TensorMapSwizzle::B128);
  Expected<TensorMapEncoding> limit = computeTensorMapEncoding(edge);
  ASSERT_TRUE(limit.ok()) << limit.message();
  EXPECT_EQ(tensorMapSpanBytes(*limit), 131072u);

  auto fresh = [] {
    std::array<unsigned char, 128> map;
    for (size_t i = 0; i < map.size(); ++i)
      map[i] = static_cast<unsigned char>(0xA5 ^ i);
    map[8 + 2] |= 0x20; // bit 21 of word 1 = bit 5 of its byte 2
    return map;
  };
  auto bit21 = [](const std::array<unsigned char, 128> &map) {
    uint64_t word;
    std::memcpy(&word, map.data() + 8, 8);
    return (word >> 21) & 1;
  };
  for (int version : {12080, 13000, 13010}) {
    std::array<unsigned char, 128> map = fresh(), before = map;
    EXPECT_TRUE(applySmallTensorMapWorkaround(map.data(), *small, version));
    EXPECT_EQ(bit21(map), 0u);
    before[8 + 2] &= ~0x20;
    EXPECT_EQ(map, before) << "only bit 21 of word 1 may change";
  }
  for (int version : {0, 13020, 14000}) {
    std::array<unsigned char, 128> map = fresh(), before = map;
    EXPECT_FALSE(applySmallTensorMapWorkaround(map.data(), *small, version));
    EXPECT_EQ(map, before);
  }
  for (const TensorMapEncoding *e : {&*large, &*limit}) {
    std::array<unsigned char, 128> map = fresh(), before = map;
    EXPECT_FALSE(applySmallTensorMapWorkaround(map.data(), *e, 13000));
    EXPECT_EQ(map, before);
  }
}
