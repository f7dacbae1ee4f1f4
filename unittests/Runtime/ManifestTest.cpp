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
  EXPECT_TRUE(quantize.params[0].isPointer);
  EXPECT_EQ(quantize.params[0].buffer, 1);
  EXPECT_FALSE(quantize.params[4].isPointer);
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

TEST(RuntimeManifest, MissingFile) {
  Expected<Manifest> m = Manifest::load(input("does-not-exist.json"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::Io);
  EXPECT_NE(m.message().find("cannot read manifest"), std::string::npos);
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

} // namespace
