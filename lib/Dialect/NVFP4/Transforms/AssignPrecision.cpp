//===- AssignPrecision.cpp - the nvfp4-assign-precision pass --------------===//
//
// Part of the nvfp4 project.
//
// Chooses a block-scaled format (NVFP4, MXFP8, MXFP4) or BF16 for every
// GEMM: explicit annotations first, then the late-training switches, the
// kinds kept in high precision, the first and last blocks, the format of the
// GEMM's kind, and the shapes that format can represent.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Dialect/NVFP4/Transforms/AssignPrecision.h"
#include "nvfp4/Dialect/NVFP4/Transforms/ApplyRecipe.h"
#include "nvfp4/Dialect/NVFP4/Transforms/GemmAnalysis.h"
#include "nvfp4/Dialect/NVFP4/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

namespace mlir {
namespace nvfp4 {
#define GEN_PASS_DEF_NVFP4ASSIGNPRECISION
#include "nvfp4/Dialect/NVFP4/Transforms/Passes.h.inc"
} // namespace nvfp4
} // namespace mlir

using namespace mlir;
using namespace mlir::nvfp4;

//===----------------------------------------------------------------------===//
// Blocks from residual connections
//===----------------------------------------------------------------------===//

/// The two operands of an elementwise tensor addition, if `op` is one:
/// `arith.addf` on tensors, `linalg.add`, or a `linalg.generic` with
/// identity maps whose body adds its two inputs.
static std::optional<std::pair<Value, Value>>
matchElementwiseAdd(Operation *op) {
  if (auto add = dyn_cast<arith::AddFOp>(op)) {
    if (isa<RankedTensorType>(add.getType()))
      return std::make_pair(add.getLhs(), add.getRhs());
    return std::nullopt;
  }
  if (auto add = dyn_cast<linalg::AddOp>(op))
    return std::make_pair(add.getInputs()[0], add.getInputs()[1]);
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 2 ||
      generic.getNumDpsInits() != 1 || generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return std::nullopt;
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() != 2)
    return std::nullopt;
  auto add = dyn_cast<arith::AddFOp>(body.front());
  if (!add || body.getTerminator()->getOperand(0) != add.getResult())
    return std::nullopt;
  Value lhs = body.getArgument(0), rhs = body.getArgument(1);
  if (!((add.getLhs() == lhs && add.getRhs() == rhs) ||
        (add.getLhs() == rhs && add.getRhs() == lhs)))
    return std::nullopt;
  return std::make_pair(generic.getInputs()[0], generic.getInputs()[1]);
}

InferredBlocks
mlir::nvfp4::inferBlocksFromResiduals(FunctionOpInterface function) {
  InferredBlocks blocks;
  // Residual connections in program order, and how many of them each value
  // has upstream (the hidden stream is a chain of them, so a maximum over
  // operands counts the blocks passed). An add is one when a GEMM lies on
  // a path between its operands; the index keeps each such question to the
  // ops between the two operands, so that N blocks cost O(N), not O(N^2).
  DataFlowIndex dataFlow(function);
  llvm::DenseMap<Operation *, bool> isGemm;
  auto gemm = [&](Operation *op) {
    auto [it, inserted] = isGemm.try_emplace(op, false);
    if (inserted)
      it->second = succeeded(matchGemm(op));
    return it->second;
  };
  auto gemmOnPath = [&](Value from, Value to) {
    return dataFlow.anyOnPath(from, to, gemm);
  };
  llvm::DenseSet<Operation *> residuals;
  function.walk([&](Operation *op) {
    std::optional<std::pair<Value, Value>> add = matchElementwiseAdd(op);
    if (add && (gemmOnPath(add->first, add->second) ||
                gemmOnPath(add->second, add->first)))
      residuals.insert(op);
  });
  blocks.numResidualConnections = residuals.size();

  llvm::DenseMap<Operation *, int64_t> passed;
  auto passedBefore = [&](Operation *op) {
    int64_t count = 0;
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def || op->isAncestor(def))
          continue;
        auto it = passed.find(def);
        if (it != passed.end())
          count =
              std::max(count, it->second + (residuals.contains(def) ? 1 : 0));
      }
    });
    return count;
  };
  function.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == function.getOperation())
      return;
    passed[op] = passedBefore(op);
  });

  int64_t last = std::max<int64_t>(0, int64_t(residuals.size()) - 1);
  function.walk([&](linalg::LinalgOp op) {
    if (succeeded(matchGemm(op)))
      blocks.blockOf[op] = std::min(passed.lookup(op), last);
  });
  return blocks;
}

//===----------------------------------------------------------------------===//
// Precision assignment
//===----------------------------------------------------------------------===//

namespace {
/// The block index and block count that apply to one GEMM.
struct BlockPosition {
  int64_t layer;
  int64_t numBlocks;
};
} // namespace

std::optional<std::string>
mlir::nvfp4::parseKindFormats(ArrayRef<std::string> entries,
                              SmallVectorImpl<KindFormat> &formats) {
  for (const std::string &entry : entries) {
    StringRef text(entry);
    auto [kind, name] = text.contains('=') ? text.split('=')
                                           : std::make_pair(StringRef(), text);
    kind = kind.trim();
    name = name.trim();
    if (text.contains('=') && kind.empty())
      return "'" + entry + "': names no kind (expected KIND=FORMAT or FORMAT)";
    std::optional<Precision> precision = symbolizePrecision(name);
    if (precision == Precision::FP8)
      return "'" + entry +
             "': fp8 GEMMs have no lowering (use mxfp8, mxfp4, nvfp4 or bf16)";
    if (!precision)
      return "'" + entry + "': unknown format '" + name.str() +
             "' (expected nvfp4, mxfp8, mxfp4 or bf16)";
    for (const KindFormat &earlier : formats)
      if (earlier.kind == kind)
        return kind.empty()
                   ? "'" + entry + "': a second default format"
                   : "'" + entry + "': kind '" + kind.str() + "' given twice";
    formats.push_back({kind.str(), *precision});
  }
  return std::nullopt;
}

/// The `formats=` entry that applies to `gemm`: the one of the pseudo-kind
/// attention-bmm for an attention BMM, else the one of its kind, else the
/// default; nullptr when there is none.
static const KindFormat *lookupKindFormat(const PrecisionPolicy &policy,
                                          const GemmInfo &gemm) {
  auto find = [&](StringRef kind) -> const KindFormat * {
    for (const KindFormat &format : policy.formats)
      if (format.kind == kind)
        return &format;
    return nullptr;
  };
  if (gemm.isAttentionBMM())
    if (const KindFormat *format = find("attention-bmm"))
      return format;
  if (!gemm.kind.empty())
    if (const KindFormat *format = find(gemm.kind))
      return format;
  return find("");
}

unsigned mlir::nvfp4::scaleRecipeKeep(unsigned keep, int64_t numBlocks) {
  if (numBlocks >= kRecipeBlocks)
    return keep;
  return static_cast<unsigned>(std::max<int64_t>(0, numBlocks) * keep /
                               kRecipeBlocks);
}

void mlir::nvfp4::assignPrecision(
    Operation *root, const PrecisionPolicy &policy,
    SmallVectorImpl<PrecisionDecision> *decisions) {
  GemmAnalysis analysis(root);
  MLIRContext *ctx = root->getContext();
  auto precisionAttr = [&](Precision precision) {
    return StringAttr::get(ctx, stringifyPrecision(precision));
  };

  // Annotated blocks count module-wide.
  int64_t annotatedBlocks = 0;
  for (const GemmInfo &gemm : analysis.getGemms())
    if (gemm.layer)
      annotatedBlocks = std::max(annotatedBlocks, *gemm.layer + 1);

  // Functions whose GEMMs carry no nvfp4.layer get inferred blocks.
  llvm::MapVector<Operation *, bool> functionHasLayers;
  for (const GemmInfo &gemm : analysis.getGemms()) {
    Operation *function = gemm.op->getParentOfType<FunctionOpInterface>();
    functionHasLayers[function] |= gemm.layer.has_value();
  }
  llvm::DenseMap<Operation *, BlockPosition> positions;
  for (auto [functionOp, hasLayers] : functionHasLayers) {
    auto function = dyn_cast_or_null<FunctionOpInterface>(functionOp);
    if (hasLayers || !function)
      continue;
    InferredBlocks blocks = inferBlocksFromResiduals(function);
    int64_t numBlocks = std::max<int64_t>(1, blocks.numResidualConnections);
    // At the function's location but without the function attached: with
    // -mlir-print-op-on-diagnostic (on by default) an op's remark prints the
    // op, which for a model of 10,000 blocks is the whole model.
    if (blocks.numResidualConnections == 0)
      mlir::emitRemark(function.getLoc())
          << "nvfp4-assign-precision: no nvfp4.layer and no residual "
             "connection in this function; assumed all its GEMMs form one "
             "block (nvfp4.layer = 0)";
    else
      mlir::emitRemark(function.getLoc())
          << "nvfp4-assign-precision: no nvfp4.layer in this function; "
             "inferred "
          << numBlocks << " blocks from its residual connections";
    for (auto [op, block] : blocks.blockOf) {
      op->setAttr(ModelAnnotation::kLayer,
                  IntegerAttr::get(IntegerType::get(ctx, 64), block));
      positions[op] = {block, numBlocks};
    }
  }

  // A keep-kinds entry that `formats` names too gives way to the format.
  auto keepsKind = [&](const GemmInfo &gemm) {
    for (const std::string &kind : policy.keepKinds) {
      if (!(kind == "attention-bmm" ? gemm.isAttentionBMM()
                                    : kind == gemm.kind))
        continue;
      if (llvm::none_of(policy.formats, [&](const KindFormat &format) {
            return format.kind == kind;
          }))
        return true;
    }
    return false;
  };

  for (const GemmInfo &gemm : analysis.getGemms()) {
    Operation *op = gemm.op;
    auto decide = [&](StringRef precision, const Twine &reason) {
      if (decisions)
        decisions->push_back({op, precision.str(), reason.str()});
    };
    if (auto existing =
            op->getAttrOfType<StringAttr>(ModelAnnotation::kPrecision)) {
      decide(existing.getValue(), "annotated nvfp4.precision = \"" +
                                      existing.getValue() + "\"");
      continue;
    }
    auto setPrecision = [&](Precision precision, const Twine &reason) {
      op->setAttr(ModelAnnotation::kPrecision, precisionAttr(precision));
      decide(stringifyPrecision(precision), reason);
    };
    if (policy.allBF16) {
      setPrecision(Precision::BF16, "all-bf16");
      continue;
    }
    if (policy.forwardBF16 && gemm.role == GemmRole::Fprop) {
      setPrecision(Precision::BF16, "forward-bf16 (an fprop GEMM)");
      continue;
    }
    if (keepsKind(gemm)) {
      std::string reason = gemm.isAttentionBMM()
                               ? std::string("an attention BMM (keep-kinds)")
                               : "kind '" + gemm.kind + "' (keep-kinds)";
      setPrecision(Precision::BF16, reason);
      continue;
    }

    // Position in the stack of blocks.
    std::optional<BlockPosition> position;
    if (auto it = positions.find(op); it != positions.end())
      position = it->second;
    else if (gemm.layer)
      position = BlockPosition{*gemm.layer, annotatedBlocks};
    if (!position) {
      op->emitRemark() << "nvfp4-assign-precision: no nvfp4.layer on this "
                          "GEMM while other GEMMs of the function have one; "
                          "kept in bf16";
      setPrecision(Precision::BF16, "no nvfp4.layer while other GEMMs of "
                                    "its function have one");
      continue;
    }
    unsigned keepFirst =
        policy.keepFirst ? *policy.keepFirst
                         : scaleRecipeKeep(kRecipeKeepFirst,
                                           position->numBlocks);
    unsigned keepLast =
        policy.keepLast ? *policy.keepLast
                        : scaleRecipeKeep(kRecipeKeepLast, position->numBlocks);
    if (position->layer < int64_t(keepFirst) ||
        position->layer >= position->numBlocks - int64_t(keepLast)) {
      setPrecision(Precision::BF16,
                   "in the first " + Twine(keepFirst) + " or last " +
                       Twine(keepLast) + " of " + Twine(position->numBlocks) +
                       " blocks, kept in BF16 (keep-first/keep-last)");
      continue;
    }

    // The format of the GEMM's kind (NVFP4 unless `formats` says else).
    Precision format = Precision::NVFP4;
    std::string formatReason = "NVFP4";
    if (const KindFormat *entry = lookupKindFormat(policy, gemm)) {
      format = entry->precision;
      formatReason =
          (entry->kind.empty() ? std::string("the default")
                               : "kind '" + entry->kind + "'") +
          " is " + stringifyPrecision(format).str() + " (formats)";
    }
    if (format == Precision::BF16) {
      setPrecision(Precision::BF16, formatReason);
      continue;
    }

    // What the format can represent: tensors of bf16/f16/f32, static
    // non-empty shapes, a contraction length that is a multiple of the
    // block (16 for NVFP4, 32 for MX).
    if (std::optional<std::string> why = checkRecipeApplicable(gemm, format)) {
      op->emitRemark() << "nvfp4-assign-precision: " << *why
                       << "; kept in bf16";
      setPrecision(Precision::BF16, *why);
      continue;
    }
    setPrecision(format, formatReason);
  }
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
struct NVFP4AssignPrecisionPass
    : public nvfp4::impl::NVFP4AssignPrecisionBase<NVFP4AssignPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    PrecisionPolicy policy;
    // Given explicitly, the values are used as they are; left unset, the
    // recipe's defaults scale to the model's depth (scaleRecipeKeep).
    if (keepFirst.hasValue())
      policy.keepFirst = keepFirst;
    if (keepLast.hasValue())
      policy.keepLast = keepLast;
    policy.keepKinds.clear();
    for (const std::string &kind : keepKinds)
      if (kind != "none")
        policy.keepKinds.push_back(kind);
    policy.allBF16 = allBF16;
    policy.forwardBF16 = forwardBF16;
    if (std::optional<std::string> error =
            parseKindFormats(formats, policy.formats)) {
      // At the module's location, without printing the module.
      mlir::emitError(getOperation().getLoc())
          << "nvfp4-assign-precision: formats=" << *error;
      return signalPassFailure();
    }
    assignPrecision(getOperation(), policy);
  }
};
} // namespace
