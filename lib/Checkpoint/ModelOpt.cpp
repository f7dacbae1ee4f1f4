//===- ModelOpt.cpp - NVFP4 checkpoints in the ModelOpt layout -----------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Checkpoint/ModelOpt.h"

#include "nvfp4/Checkpoint/SafeTensors.h"
#include "nvfp4/Numerics/Formats.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstring>
#include <map>
#include <memory>

using namespace llvm;
using namespace nvfp4::checkpoint;
namespace numerics = nvfp4::numerics;

static constexpr StringLiteral kQuantConfigFile = "hf_quant_config.json";
static constexpr StringLiteral kModelFile = "model.safetensors";

static Error fail(const Twine &Message) {
  return createStringError(inconvertibleErrorCode(), Message);
}

/// Widens IEEE binary16 bits to a float (exact).
static float halfToFloat(uint16_t Bits) {
  uint32_t Sign = uint32_t(Bits >> 15) << 31;
  uint32_t Exponent = (Bits >> 10) & 0x1F, Mantissa = Bits & 0x3FF;
  float Magnitude;
  if (Exponent == 0)
    Magnitude = std::ldexp(static_cast<float>(Mantissa), -24);
  else if (Exponent == 31)
    Magnitude = Mantissa ? std::numeric_limits<float>::quiet_NaN()
                         : std::numeric_limits<float>::infinity();
  else
    Magnitude = std::ldexp(static_cast<float>(Mantissa | 0x400),
                           static_cast<int>(Exponent) - 25);
  uint32_t Out;
  std::memcpy(&Out, &Magnitude, 4);
  Out |= Sign;
  float Result;
  std::memcpy(&Result, &Out, 4);
  return Result;
}

/// The values of a BF16, F16 or F32 tensor as floats (exact widening).
static std::vector<float> toFloats(DType Type, ArrayRef<uint8_t> Bytes) {
  std::vector<float> Values(Bytes.size() / dtypeSize(Type));
  for (size_t I = 0; I < Values.size(); ++I) {
    const uint8_t *P = Bytes.data() + I * dtypeSize(Type);
    switch (Type) {
    case DType::BF16:
      Values[I] = numerics::bf16ToFloat(support::endian::read16le(P));
      break;
    case DType::F16:
      Values[I] = halfToFloat(support::endian::read16le(P));
      break;
    default: {
      uint32_t Bits = support::endian::read32le(P);
      std::memcpy(&Values[I], &Bits, 4);
      break;
    }
    }
  }
  return Values;
}

static std::vector<uint8_t> floatBytes(float Value) {
  std::vector<uint8_t> Bytes(4);
  uint32_t Bits;
  std::memcpy(&Bits, &Value, 4);
  support::endian::write32le(Bytes.data(), Bits);
  return Bytes;
}

static bool isHighPrecision(DType Type) {
  return Type == DType::BF16 || Type == DType::F16 || Type == DType::F32;
}

/// The transformer block index of a module name ("model.layers.3.mlp.up" ->
/// 3; also GPT-2's "h.3."), if any.
static std::optional<int64_t> blockIndex(StringRef Module) {
  SmallVector<StringRef> Parts;
  Module.split(Parts, '.');
  for (size_t I = 0; I + 1 < Parts.size(); ++I) {
    if (Parts[I] != "layers" && Parts[I] != "h" && Parts[I] != "blocks" &&
        Parts[I] != "layer")
      continue;
    int64_t Index;
    if (!Parts[I + 1].getAsInteger(10, Index))
      return Index;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// quantize
//===----------------------------------------------------------------------===//

/// Reads {"module": amax, ...}.
static Expected<std::map<std::string, float>> readInputAmaxes(StringRef Path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buffer = MemoryBuffer::getFile(Path);
  if (!Buffer)
    return fail(Path + ": " + Buffer.getError().message());
  Expected<json::Value> Parsed = json::parse((*Buffer)->getBuffer());
  if (!Parsed)
    return fail(Path + ": not valid JSON: " + toString(Parsed.takeError()));
  const json::Object *Root = Parsed->getAsObject();
  if (!Root)
    return fail(Path + ": expected an object {\"module name\": amax, ...}");
  std::map<std::string, float> Amaxes;
  for (const auto &[Key, Value] : *Root) {
    std::optional<double> Number = Value.getAsNumber();
    float Amax = Number ? static_cast<float>(*Number) : -1.0f;
    if (!Number || !std::isfinite(Amax) || Amax < 0.0f)
      return fail(Path + ": the amax of '" + StringRef(Key) +
                  "' must be a finite number >= 0");
    Amaxes[Key.str()] = Amax;
  }
  return Amaxes;
}

/// Why `Module` (whose weight is a [N, K] high-precision matrix) stays
/// unquantized, or an empty string.
static std::string exclusionReason(StringRef Module, int64_t K,
                                   const QuantizePolicy &Policy,
                                   std::optional<int64_t> LastBlock,
                                   ArrayRef<GlobPattern> Patterns) {
  StringRef Leaf =
      Module.rsplit('.').second.empty() ? Module : Module.rsplit('.').second;
  if (Module.contains("embed") || Leaf == "wte" || Leaf == "wpe")
    return "embedding";
  if (Module.contains("lm_head") || Leaf == "output")
    return "LM head";
  for (const GlobPattern &Pattern : Patterns)
    if (Pattern.match(Module))
      return "excluded by pattern";
  if (std::optional<int64_t> Block = blockIndex(Module)) {
    if (*Block < Policy.KeepFirst)
      return "first " + std::to_string(Policy.KeepFirst) + " blocks kept";
    if (LastBlock && *Block > *LastBlock - Policy.KeepLast)
      return "last " + std::to_string(Policy.KeepLast) + " blocks kept";
  }
  if (K % numerics::kBlockSize != 0)
    return "K = " + std::to_string(K) + " is not a multiple of 16";
  return "";
}

/// The quantized parts of one weight, produced once and handed to the three
/// output tensors in turn.
struct QuantizedWeight {
  std::optional<numerics::QuantizedTensor> Tensor;
  std::vector<uint8_t> Packed;
};

Expected<QuantizeSummary> nvfp4::checkpoint::quantizeCheckpoint(
    StringRef In, StringRef OutDir, const CheckpointQuantizeOptions &Options) {
  Expected<SafeTensorsReader> Opened = SafeTensorsReader::open(In);
  if (!Opened)
    return Opened.takeError();
  auto Reader = std::make_shared<SafeTensorsReader>(std::move(*Opened));

  std::map<std::string, float> InputAmaxes;
  if (!Options.InputAmaxFile.empty()) {
    Expected<std::map<std::string, float>> Read =
        readInputAmaxes(Options.InputAmaxFile);
    if (!Read)
      return Read.takeError();
    InputAmaxes = std::move(*Read);
  }
  std::vector<GlobPattern> Patterns;
  for (const std::string &Text : Options.Policy.Exclude) {
    Expected<GlobPattern> Pattern = GlobPattern::create(Text);
    if (!Pattern)
      return fail("bad exclude pattern '" + Text +
                  "': " + toString(Pattern.takeError()));
    Patterns.push_back(std::move(*Pattern));
  }
  std::optional<int64_t> LastBlock;
  for (const TensorInfo &Info : Reader->tensors())
    if (std::optional<int64_t> Block = blockIndex(Info.Name))
      LastBlock = std::max(LastBlock.value_or(0), *Block);

  QuantizeSummary Summary;
  SafeTensorsWriter Writer;
  for (const auto &[Key, Value] : Reader->metadata())
    Writer.setMetadata(Key, Value);
  StringSet<> QuantizedModules;
  for (const TensorInfo &Info : Reader->tensors()) {
    const TensorInfo *Source = &Info;
    auto copy = [Reader, Source]() { return Reader->read(*Source); };
    StringRef Name = Info.Name;
    bool Linear = Name.ends_with(".weight") && Info.Shape.size() == 2 &&
                  isHighPrecision(Info.Type) && Info.numElements() > 0;
    if (!Linear) {
      if (Error E = Writer.add(Name, Info.Type, Info.Shape, copy))
        return std::move(E);
      continue;
    }
    StringRef Module = Name.drop_back(strlen(".weight"));
    int64_t N = Info.Shape[0], K = Info.Shape[1];
    std::string Reason =
        exclusionReason(Module, K, Options.Policy, LastBlock, Patterns);
    if (!Reason.empty()) {
      Summary.Excluded.emplace_back(Module.str(), Reason);
      if (Error E = Writer.add(Name, Info.Type, Info.Shape, copy))
        return std::move(E);
      continue;
    }
    Summary.Quantized.push_back(Module.str());
    QuantizedModules.insert(Module);
    auto Shared = std::make_shared<QuantizedWeight>();
    auto produceWeight = [Reader, Source, Shared, N,
                          K]() -> Expected<std::vector<uint8_t>> {
      Expected<std::vector<uint8_t>> Bytes = Reader->read(*Source);
      if (!Bytes)
        return Bytes.takeError();
      std::vector<float> Values = toFloats(Source->Type, *Bytes);
      numerics::QuantizeOptions Quantize; // 1x16 blocks, RNE, own amax
      numerics::Expected<numerics::QuantizedTensor> Q =
          numerics::quantize(Values.data(), Values.size(), N, K, Quantize);
      if (!Q.ok())
        return fail("quantizing '" + Source->Name +
                    "': " + Q.status().message());
      numerics::Expected<std::vector<uint8_t>> Packed =
          numerics::packNibbles(Q->Codes.data(), Q->Codes.size());
      if (!Packed.ok())
        return fail(Packed.status().message());
      Shared->Tensor = std::move(*Q);
      return std::move(*Packed);
    };
    auto produceScales = [Shared]() -> Expected<std::vector<uint8_t>> {
      return std::move(Shared->Tensor->Scales);
    };
    auto produceDecodeScale = [Shared]() -> Expected<std::vector<uint8_t>> {
      float Decode = numerics::computeDequantFactor(Shared->Tensor->Amax);
      Shared->Tensor.reset();
      return floatBytes(Decode);
    };
    if (Error E = Writer.add(Name, DType::U8, {N, K / 2}, produceWeight))
      return std::move(E);
    if (Error E = Writer.add((Module + ".weight_scale").str(), DType::F8E4M3,
                             {N, K / numerics::kBlockSize}, produceScales))
      return std::move(E);
    if (Error E = Writer.add((Module + ".weight_scale_2").str(), DType::F32, {},
                             produceDecodeScale))
      return std::move(E);
    auto Amax = InputAmaxes.find(Module.str());
    if (Amax != InputAmaxes.end())
      if (Error E = Writer.add(
              (Module + ".input_scale").str(), DType::F32, {},
              floatBytes(numerics::computeDequantFactor(Amax->second))))
        return std::move(E);
  }
  for (const auto &[Module, Amax] : InputAmaxes)
    if (!QuantizedModules.contains(Module))
      return fail(Options.InputAmaxFile + ": '" + Module +
                  "' is not a quantized linear layer of " + In);

  if (std::error_code EC = sys::fs::create_directories(OutDir))
    return fail(OutDir + ": " + EC.message());
  SmallString<256> ModelPath(OutDir), ConfigPath(OutDir);
  sys::path::append(ModelPath, kModelFile);
  sys::path::append(ConfigPath, kQuantConfigFile);
  if (Error E = Writer.write(ModelPath))
    return std::move(E);

  std::string Config;
  {
    raw_string_ostream OS(Config);
    json::OStream J(OS, /*IndentSize=*/2);
    J.object([&] {
      J.attributeObject("producer", [&] {
        J.attribute("name", "nvfp4");
        J.attribute("version", Options.ProducerVersion);
      });
      J.attributeObject("quantization", [&] {
        J.attribute("quant_algo", "NVFP4");
        J.attribute("kv_cache_quant_algo", nullptr);
        J.attribute("group_size", numerics::kBlockSize);
        J.attributeArray("exclude_modules", [&] {
          for (const auto &Excluded : Summary.Excluded)
            J.value(Excluded.first);
        });
      });
    });
    OS << "\n";
  }
  std::error_code EC;
  raw_fd_ostream ConfigOS(ConfigPath, EC);
  if (EC)
    return fail(ConfigPath + ": " + EC.message());
  ConfigOS << Config;
  ConfigOS.close();
  if (ConfigOS.has_error()) {
    ConfigOS.clear_error();
    return fail(ConfigPath + ": write failed");
  }
  return Summary;
}

//===----------------------------------------------------------------------===//
// load
//===----------------------------------------------------------------------===//

namespace {
/// A checkpoint directory: its quantization config and safetensors files.
struct CheckpointDir {
  std::vector<std::string> Exclude;
  std::vector<SafeTensorsReader> Files;

  const TensorInfo *find(StringRef Name,
                         const SafeTensorsReader **Owner) const {
    for (const SafeTensorsReader &File : Files)
      if (const TensorInfo *Info = File.find(Name)) {
        *Owner = &File;
        return Info;
      }
    return nullptr;
  }
};
} // namespace

static Expected<CheckpointDir> openCheckpointDir(StringRef Dir) {
  CheckpointDir Result;
  SmallString<256> ConfigPath(Dir);
  sys::path::append(ConfigPath, kQuantConfigFile);
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buffer =
      MemoryBuffer::getFile(ConfigPath);
  if (!Buffer)
    return fail(ConfigPath + ": " + Buffer.getError().message() +
                " (not an NVFP4 checkpoint directory?)");
  Expected<json::Value> Parsed = json::parse((*Buffer)->getBuffer());
  if (!Parsed)
    return fail(ConfigPath +
                ": not valid JSON: " + toString(Parsed.takeError()));
  const json::Object *Root = Parsed->getAsObject();
  const json::Object *Quantization =
      Root ? Root->getObject("quantization") : nullptr;
  if (!Quantization)
    return fail(ConfigPath + ": missing the \"quantization\" object");
  std::optional<StringRef> Algo = Quantization->getString("quant_algo");
  if (!Algo || *Algo != "NVFP4")
    return fail(ConfigPath + ": quant_algo is " +
                (Algo ? "'" + Algo->str() + "'" : std::string("missing")) +
                ", expected 'NVFP4'");
  std::optional<int64_t> GroupSize = Quantization->getInteger("group_size");
  if (GroupSize && *GroupSize != numerics::kBlockSize)
    return fail(ConfigPath + ": group_size " + Twine(*GroupSize) +
                " (NVFP4 has 16)");
  if (const json::Array *Exclude = Quantization->getArray("exclude_modules"))
    for (const json::Value &Entry : *Exclude)
      if (std::optional<StringRef> Text = Entry.getAsString())
        Result.Exclude.push_back(Text->str());

  std::error_code EC;
  std::vector<std::string> Paths;
  for (sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC))
    if (StringRef(It->path()).ends_with(".safetensors"))
      Paths.push_back(It->path());
  if (EC)
    return fail(Dir + ": " + EC.message());
  if (Paths.empty())
    return fail(Dir + ": no .safetensors file");
  llvm::sort(Paths);
  for (const std::string &Path : Paths) {
    Expected<SafeTensorsReader> Reader = SafeTensorsReader::open(Path);
    if (!Reader)
      return Reader.takeError();
    Result.Files.push_back(std::move(*Reader));
  }
  return std::move(Result);
}

static std::string shapeText(ArrayRef<int64_t> Shape) {
  std::string Text = "[";
  for (auto [I, Dim] : llvm::enumerate(Shape))
    Text += (I ? ", " : "") + std::to_string(Dim);
  return Text + "]";
}

/// Reads the FP32 scalar `Name` (shape [] or [1]).
static Expected<float> readScalar(const CheckpointDir &Checkpoint,
                                  StringRef Name) {
  const SafeTensorsReader *File = nullptr;
  const TensorInfo *Info = Checkpoint.find(Name, &File);
  if (!Info)
    return fail("missing tensor '" + Name + "'");
  if (Info->Type != DType::F32 || Info->numElements() != 1 ||
      Info->Shape.size() > 1)
    return fail("'" + Name + "' must be an F32 scalar (shape [] or [1]), got " +
                dtypeName(Info->Type) + " " + shapeText(Info->Shape));
  Expected<std::vector<uint8_t>> Bytes = File->read(*Info);
  if (!Bytes)
    return Bytes.takeError();
  uint32_t Bits = support::endian::read32le(Bytes->data());
  float Value;
  std::memcpy(&Value, &Bits, 4);
  if (!std::isfinite(Value) || Value < 0.0f)
    return fail("'" + Name + "' must be finite and non-negative, got " +
                Twine(std::to_string(Value)));
  return Value;
}

static Expected<NVFP4Layer> loadLayerFrom(const CheckpointDir &Checkpoint,
                                          StringRef Dir, StringRef Name) {
  auto withLayer = [&](Error E) {
    return fail(Dir + ": layer '" + Name + "': " + toString(std::move(E)));
  };
  const SafeTensorsReader *WeightFile = nullptr, *ScaleFile = nullptr;
  std::string WeightName = (Name + ".weight").str();
  const TensorInfo *Weight = Checkpoint.find(WeightName, &WeightFile);
  if (!Weight)
    return withLayer(fail("no tensor '" + WeightName + "'"));
  if (Weight->Type != DType::U8 || Weight->Shape.size() != 2)
    return withLayer(fail(
        "'" + WeightName + "' must be U8 [N, K/2] packed E2M1 codes, got " +
        dtypeName(Weight->Type) + " " + shapeText(Weight->Shape) +
        (llvm::is_contained(Checkpoint.Exclude, Name)
             ? " (the layer is in exclude_modules)"
             : "")));
  int64_t N = Weight->Shape[0], K = 2 * Weight->Shape[1];
  if (N == 0 || K % numerics::kBlockSize != 0)
    return withLayer(fail("weight shape " + shapeText(Weight->Shape) +
                          " gives [N, K] = [" + Twine(N) + ", " + Twine(K) +
                          "]: N must be positive and K a multiple of 16"));
  std::string ScaleName = (Name + ".weight_scale").str();
  const TensorInfo *Scale = Checkpoint.find(ScaleName, &ScaleFile);
  if (!Scale)
    return withLayer(fail("no tensor '" + ScaleName + "'"));
  std::vector<int64_t> WantScale = {N, K / numerics::kBlockSize};
  if (Scale->Type != DType::F8E4M3 || Scale->Shape != WantScale)
    return withLayer(fail(
        "'" + ScaleName + "' must be F8_E4M3 " + shapeText(WantScale) +
        ", got " + dtypeName(Scale->Type) + " " + shapeText(Scale->Shape)));

  NVFP4Layer Layer;
  Layer.Name = Name.str();
  numerics::QuantizedTensor &Q = Layer.Weight;
  Q.Rows = N;
  Q.Cols = K;
  Q.Block = numerics::BlockShape::Row1x16;
  Expected<std::vector<uint8_t>> Packed = WeightFile->read(*Weight);
  if (!Packed)
    return withLayer(Packed.takeError());
  Q.Codes = numerics::unpackNibbles(Packed->data(), Packed->size());
  Expected<std::vector<uint8_t>> Scales = ScaleFile->read(*Scale);
  if (!Scales)
    return withLayer(Scales.takeError());
  Q.Scales = std::move(*Scales);
  for (auto [I, Bits] : llvm::enumerate(Q.Scales))
    if ((Bits & 0x80) || (Bits & 0x7F) == 0x7F)
      return withLayer(fail("'" + ScaleName + "' element " + Twine(I) +
                            " is 0x" + utohexstr(Bits) +
                            ": block scales must be non-negative and not "
                            "NaN (E4M3 bits 0x00-0x7E)"));
  Expected<float> Decode =
      readScalar(Checkpoint, (Name + ".weight_scale_2").str());
  if (!Decode)
    return withLayer(Decode.takeError());
  Q.DecodeScale = *Decode;
  std::string InputName = (Name + ".input_scale").str();
  const SafeTensorsReader *InputFile = nullptr;
  if (Checkpoint.find(InputName, &InputFile)) {
    Expected<float> Input = readScalar(Checkpoint, InputName);
    if (!Input)
      return withLayer(Input.takeError());
    Layer.InputScale = *Input;
  }
  if (numerics::Status S = numerics::validateQuantizedTensor(Q); !S.ok())
    return withLayer(fail(S.message()));
  return std::move(Layer);
}

Expected<NVFP4Layer> nvfp4::checkpoint::loadLayer(StringRef Dir,
                                                  StringRef Name) {
  Expected<CheckpointDir> Checkpoint = openCheckpointDir(Dir);
  if (!Checkpoint)
    return Checkpoint.takeError();
  return loadLayerFrom(*Checkpoint, Dir, Name);
}

static std::vector<std::string> layerNames(const CheckpointDir &Checkpoint) {
  std::vector<std::string> Names;
  for (const SafeTensorsReader &File : Checkpoint.Files)
    for (const TensorInfo &Info : File.tensors())
      if (StringRef(Info.Name).ends_with(".weight_scale_2"))
        Names.push_back(
            StringRef(Info.Name).drop_back(strlen(".weight_scale_2")).str());
  llvm::sort(Names);
  return Names;
}

Expected<std::vector<std::string>>
nvfp4::checkpoint::listLayers(StringRef Dir) {
  Expected<CheckpointDir> Checkpoint = openCheckpointDir(Dir);
  if (!Checkpoint)
    return Checkpoint.takeError();
  return layerNames(*Checkpoint);
}

//===----------------------------------------------------------------------===//
// import
//===----------------------------------------------------------------------===//

/// An FP32 value as an exact MLIR literal (its bits in hex).
static std::string f32Literal(float Value) {
  uint32_t Bits;
  std::memcpy(&Bits, &Value, 4);
  return "0x" + utohexstr(Bits, /*LowerCase=*/false, /*Width=*/8);
}

std::string nvfp4::checkpoint::importLayerProgram(const NVFP4Layer &Layer,
                                                  int64_t Tokens) {
  int64_t N = Layer.Weight.Rows, K = Layer.Weight.Cols;
  std::string T = std::to_string(Tokens), NS = std::to_string(N),
              KS = std::to_string(K);
  std::string Act = "!nvfp4.tensor<" + T + "x" + KS +
                    "xf4E2M1FN, scale = f8E4M3FN, block = 1x16>";
  std::string Wt = "!nvfp4.tensor<" + NS + "x" + KS +
                   "xf4E2M1FN, scale = f8E4M3FN, block = 1x16, "
                   "tensor_scale = decode>";
  std::string X = "tensor<" + T + "x" + KS + "xbf16>";
  std::string Y = "tensor<" + T + "x" + NS + "xbf16>";
  std::string Out;
  raw_string_ostream OS(Out);
  OS << "// Layer '" << Layer.Name << "' of an NVFP4 checkpoint (ModelOpt "
     << "layout), imported by nvfp4-checkpoint.\n"
     << "// %w is the checkpoint's weight: codes, weight_scale and "
     << "weight_scale_2 = " << f32Literal(*Layer.Weight.DecodeScale)
     << " (bit for bit).\n"
     << "func.func @forward(%x: " << X << ",\n"
     << "    %w: " << Wt << " {nvfp4.weight}) -> " << Y << " {\n";
  if (Layer.InputScale) {
    // The activation's static amax: input_scale = amax / 2688.
    float Amax = *Layer.InputScale * numerics::kNVFP4RangeProduct;
    OS << "  // input_scale " << f32Literal(*Layer.InputScale)
       << " as a static activation amax (input_scale * 2688).\n"
       << "  %amax = arith.constant " << f32Literal(Amax) << " : f32\n"
       << "  %xq = nvfp4.quantize %x amax(%amax) : " << X << " -> " << Act
       << "\n";
  } else {
    OS << "  %xq = nvfp4.quantize %x : " << X << " -> " << Act << "\n";
  }
  OS << "  %y = nvfp4.scaled_matmul %xq, %w role<fprop> : " << Act << ",\n"
     << "      " << Wt << " -> " << Y << "\n"
     << "  return %y : " << Y << "\n"
     << "}\n";
  return Out;
}

//===----------------------------------------------------------------------===//
// inspect
//===----------------------------------------------------------------------===//

static void printTensors(const SafeTensorsReader &File, raw_ostream &OS) {
  OS << File.path() << ": " << File.tensors().size() << " tensors\n";
  for (const auto &[Key, Value] : File.metadata())
    OS << "  metadata " << Key << " = " << Value << "\n";
  for (const TensorInfo &Info : File.tensors())
    OS << "  " << Info.Name << " " << dtypeName(Info.Type) << " "
       << shapeText(Info.Shape) << "\n";
}

Error nvfp4::checkpoint::inspectCheckpoint(StringRef Path, raw_ostream &OS) {
  if (!sys::fs::is_directory(Path)) {
    Expected<SafeTensorsReader> Reader = SafeTensorsReader::open(Path);
    if (!Reader)
      return Reader.takeError();
    printTensors(*Reader, OS);
    return Error::success();
  }
  Expected<CheckpointDir> Checkpoint = openCheckpointDir(Path);
  if (!Checkpoint)
    return Checkpoint.takeError();
  std::vector<std::string> Layers = layerNames(*Checkpoint);
  OS << Path << ": NVFP4 checkpoint (ModelOpt layout), " << Layers.size()
     << " NVFP4 layers, " << Checkpoint->Exclude.size()
     << " excluded modules\n";
  for (const std::string &Name : Layers) {
    Expected<NVFP4Layer> Layer = loadLayerFrom(*Checkpoint, Path, Name);
    if (!Layer)
      return Layer.takeError();
    OS << "  nvfp4 " << Name << " [" << Layer->Weight.Rows << ", "
       << Layer->Weight.Cols << "] weight_scale_2 "
       << f32Literal(*Layer->Weight.DecodeScale) << " ("
       << format("%g", *Layer->Weight.DecodeScale) << ")";
    if (Layer->InputScale)
      OS << " input_scale " << f32Literal(*Layer->InputScale) << " ("
         << format("%g", *Layer->InputScale) << ")";
    OS << "\n";
  }
  for (const std::string &Name : Checkpoint->Exclude)
    OS << "  excluded " << Name << "\n";
  for (const SafeTensorsReader &File : Checkpoint->Files)
    printTensors(File, OS);
  return Error::success();
}
