//===- ModelOpt.h - NVFP4 checkpoints in the ModelOpt layout ----*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The NVFP4 checkpoint layout NVIDIA's Model Optimizer exports and vLLM and
// TensorRT-LLM load (docs/Checkpoints.md). Per quantized linear layer NAME:
//
//   NAME.weight          U8       [N, K/2]   E2M1 codes, element 2i in the low
//                                            nibble of byte i
//   NAME.weight_scale    F8_E4M3  [N, K/16]  one block scale per 16 along K
//   NAME.weight_scale_2  F32      []         the decode scale (amax / 2688)
//   NAME.input_scale     F32      []         the activation's (optional)
//
// plus hf_quant_config.json {"quantization": {"quant_algo": "NVFP4",
// "group_size": 16, "exclude_modules": [...]}}. Every other tensor is kept as
// it was.
//
// Quantization keeps TransformerEngine's bytes (numerics::quantize with 1x16
// blocks and the tensor's own amax); the decode scale written is
// fp32(amax / 2688), which is the factor our dequantization multiplies by, so
// the checkpoint decodes to exactly the numerics library's values. Loading
// keeps the checkpoint's weight_scale_2 bit for bit (QuantizedTensor's
// DecodeScale): no amax reproduces every decode scale.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_CHECKPOINT_MODELOPT_H
#define NVFP4_CHECKPOINT_MODELOPT_H

#include "nvfp4/Numerics/Quantize.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace nvfp4::checkpoint {

/// Which linear layers stay in high precision.
struct QuantizePolicy {
  /// Module names (a weight's name without ".weight") kept unquantized;
  /// `*` matches any run of characters, as in ModelOpt's exclude_modules.
  std::vector<std::string> Exclude;
  /// Transformer blocks (the index in "...layers.<i>." / "...h.<i>.") kept
  /// in BF16 at the start and at the end of the model.
  int64_t KeepFirst = 0, KeepLast = 0;
};

struct CheckpointQuantizeOptions {
  QuantizePolicy Policy;
  /// A JSON file {"module name": activation amax, ...}: those modules get an
  /// input_scale of fp32(amax / 2688).
  std::string InputAmaxFile;
  /// The producer version written to hf_quant_config.json.
  std::string ProducerVersion = "unknown";
};

/// What quantizeCheckpoint() did with each linear weight.
struct QuantizeSummary {
  std::vector<std::string> Quantized;
  /// Module name and why it stayed unquantized.
  std::vector<std::pair<std::string, std::string>> Excluded;
};

/// Quantizes the linear weights of the BF16/FP16/FP32 safetensors file `In`
/// into `OutDir`/model.safetensors and writes `OutDir`/hf_quant_config.json.
/// Embeddings, the LM head and the layers the policy keeps are copied as
/// they are.
llvm::Expected<QuantizeSummary>
quantizeCheckpoint(llvm::StringRef In, llvm::StringRef OutDir,
                   const CheckpointQuantizeOptions &Options);

/// One NVFP4 linear layer of a checkpoint, exactly as stored.
struct NVFP4Layer {
  std::string Name;
  /// Row-major [N, K] codes, the E4M3 scales and DecodeScale =
  /// weight_scale_2's bits.
  numerics::QuantizedTensor Weight;
  std::optional<float> InputScale;
};

/// Loads layer `Name` (a module name) from the checkpoint directory `Dir`
/// (hf_quant_config.json and its *.safetensors files).
llvm::Expected<NVFP4Layer> loadLayer(llvm::StringRef Dir, llvm::StringRef Name);

/// The names of the NVFP4 layers of checkpoint directory `Dir`.
llvm::Expected<std::vector<std::string>> listLayers(llvm::StringRef Dir);

/// An MLIR program for `Layer`: @forward(%x: tensor<Tokens x K x bf16>,
/// %w: !nvfp4.tensor<N x K ..., tensor_scale = decode> {nvfp4.weight}) ->
/// tensor<Tokens x N x bf16>, the activation quantized per call (with the
/// static amax fp32(input_scale * 2688) where the checkpoint has an
/// input_scale) and one nvfp4.scaled_matmul.
std::string importLayerProgram(const NVFP4Layer &Layer, int64_t Tokens);

/// Prints what a safetensors file or a checkpoint directory holds.
llvm::Error inspectCheckpoint(llvm::StringRef Path, llvm::raw_ostream &OS);

} // namespace nvfp4::checkpoint

#endif // NVFP4_CHECKPOINT_MODELOPT_H
