//===- RaiseUpstreamScaling.cpp - upstream's scaling ops to nvfp4 ops ------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// nvfp4-raise-upstream-scaling: arith.scaling_truncf / arith.scaling_extf
// whose surroundings make them an MX quantization or dequantization with
// nvfp4's semantics, bit for bit, become nvfp4.quantize / nvfp4.dequantize.
// The upstream ops leave the block size, the scale rule and the handling of
// non-finite values to the IR around them, so the analysis below checks
// each of those (docs/Numerics.md section 11.6) and reports the first one
// that differs; a difference leaves the IR as it is.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Conversion/UpstreamScaling/UpstreamScaling.h"
#include "UpstreamScalingForm.h"

#include "nvfp4/Conversion/Passes.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

namespace mlir {
namespace nvfp4 {
#define GEN_PASS_DEF_NVFP4RAISEUPSTREAMSCALING
#include "nvfp4/Conversion/Passes.h.inc"
} // namespace nvfp4
} // namespace mlir

using namespace mlir;
using namespace mlir::nvfp4;
using namespace mlir::nvfp4::upstream_scaling;

//===----------------------------------------------------------------------===//
// Small matchers
//===----------------------------------------------------------------------===//

static bool isIntConst(Value value, uint64_t expected) {
  APInt bits;
  return matchPattern(value, m_ConstantInt(&bits)) &&
         bits.getZExtValue() == expected;
}

/// The bits of a scalar float constant.
static std::optional<uint64_t> floatConstBits(Value value) {
  FloatAttr attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  return attr.getValue().bitcastToAPInt().getZExtValue();
}

static bool isF32Const(Value value, float expected) {
  uint32_t bits;
  std::memcpy(&bits, &expected, sizeof(bits));
  std::optional<uint64_t> got = floatConstBits(value);
  return got && *got == bits;
}

/// For a commutative binary op: the operand that is not `constant`-like
/// (`isConst` true for the other one), or null.
template <typename OpTy>
static Value otherOperand(OpTy op, llvm::function_ref<bool(Value)> isConst) {
  if (!op)
    return {};
  if (isConst(op.getRhs()))
    return op.getLhs();
  if (isConst(op.getLhs()))
    return op.getRhs();
  return {};
}

static std::string str(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

//===----------------------------------------------------------------------===//
// The pieces of the form (docs/Numerics.md section 11.6)
//===----------------------------------------------------------------------===//

/// The [..., C / 32] scale tensor that `perElement` broadcasts to every
/// element of its 1x32 block (tensor.collapse_shape of linalg.broadcast
/// along a new last dimension), or null with `why` set.
static Value matchBlockBroadcast(Value perElement, int64_t rank,
                                 std::string &why) {
  auto collapse = perElement.getDefiningOp<tensor::CollapseShapeOp>();
  auto broadcast =
      collapse ? collapse.getSrc().getDefiningOp<linalg::BroadcastOp>()
               : linalg::BroadcastOp();
  if (!broadcast || broadcast.getDimensions() != ArrayRef<int64_t>{rank}) {
    why = "the scale operand is not one scale per block broadcast along the "
          "last dimension (tensor.collapse_shape of a linalg.broadcast)";
    return {};
  }
  SmallVector<ReassociationIndices> expected;
  for (int64_t d = 0; d + 1 < rank; ++d)
    expected.push_back({d});
  expected.push_back({rank - 1, rank});
  if (collapse.getReassociationIndices() != expected) {
    why = "the scale broadcast does not split the last dimension";
    return {};
  }
  int64_t block =
      cast<RankedTensorType>(collapse.getSrc().getType()).getShape().back();
  if (block != kBlock) {
    why = "blocks of " + std::to_string(block) +
          " elements: the MX formats scale blocks of 1x32";
    return {};
  }
  return broadcast.getInput();
}

/// Common type checks; `wide` is the f32/bf16 side.
static bool checkShape(RankedTensorType type, std::string &why) {
  if (!type.hasStaticShape()) {
    why = "dynamic shape: !nvfp4.tensor is static";
    return false;
  }
  if (type.getRank() < 2) {
    why = "rank-" + std::to_string(type.getRank()) +
          " tensor: !nvfp4.tensor is at least 2-D";
    return false;
  }
  return true;
}

static bool checkWide(Type element, bool isInput, std::string &why) {
  if (element.isF32() || element.isBF16())
    return true;
  if (element.isF16())
    why = isInput ? "f16 input: arith.scaling_truncf divides in f16, where "
                    "2^(s-127) is not representable for most scales "
                    "(nvfp4.quantize scales in f32)"
                  : "f16 result: arith.scaling_extf multiplies in f16, where "
                    "2^(s-127) is not representable for most scales "
                    "(nvfp4.dequantize scales in f32)";
  else
    why = (isInput ? "input element type " : "result element type ") +
          str(element) + ": nvfp4 takes f32 and bf16 here";
  return false;
}

static std::optional<ElementInfo> checkElement(Type element, std::string &why) {
  std::optional<ElementInfo> info = elementInfoOf(element);
  if (!info)
    why = "element type " + str(element) +
          " is not an MX element type (f8E4M3FN, f8E5M2, f4E2M1FN)";
  return info;
}

static bool checkScaleType(Type scale, std::string &why) {
  if (isa<Float8E8M0FNUType>(getElementTypeOrSelf(scale)))
    return true;
  why = "scales of type " + str(getElementTypeOrSelf(scale)) +
        ": the MX formats' scales are f8E8M0FNU";
  return false;
}

/// Whether `map` computes the E8M0 byte of nvfp4's rule from its input,
/// the block amax: v = amax * fp32(1/max_elem), bits b of v,
/// b <= 0x400000 ? 0 : min((b + 0x7FFFFF) >> 23, 254).
static bool isScaleRule(linalg::MapOp map, const ElementInfo &info) {
  Block &body = map.getMapper().front();
  Value amax = body.getArgument(0);
  Value yielded = body.getTerminator()->getOperand(0);
  auto toE8M0 = yielded.getDefiningOp<arith::BitcastOp>();
  auto narrow = toE8M0 ? toE8M0.getIn().getDefiningOp<arith::TruncIOp>()
                       : arith::TruncIOp();
  auto select = narrow ? narrow.getIn().getDefiningOp<arith::SelectOp>()
                       : arith::SelectOp();
  if (!select || !select.getType().isInteger(32) ||
      !isIntConst(select.getTrueValue(), 0))
    return false;
  auto tiny = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!tiny || tiny.getPredicate() != arith::CmpIPredicate::ule ||
      !isIntConst(tiny.getRhs(), kSubnormalLimit))
    return false;
  Value bits = tiny.getLhs();
  Value shifted = otherOperand(
      select.getFalseValue().getDefiningOp<arith::MinUIOp>(),
      [](Value v) { return isIntConst(v, kMaxScaleByte); });
  auto shift = shifted ? shifted.getDefiningOp<arith::ShRUIOp>()
                       : arith::ShRUIOp();
  if (!shift || !isIntConst(shift.getRhs(), 23))
    return false;
  Value roundedFrom = otherOperand(
      shift.getLhs().getDefiningOp<arith::AddIOp>(),
      [](Value v) { return isIntConst(v, kRoundUp); });
  if (!roundedFrom || roundedFrom != bits)
    return false;
  auto toBits = bits.getDefiningOp<arith::BitcastOp>();
  if (!toBits || !toBits.getIn().getType().isF32())
    return false;
  float rcp = reciprocalOf(info);
  Value product = otherOperand(
      toBits.getIn().getDefiningOp<arith::MulFOp>(),
      [&](Value v) { return isF32Const(v, rcp); });
  return product == amax;
}

/// Why the scale map is not nvfp4's rule, for the remark.
static std::string describeScaleMismatch(linalg::MapOp map,
                                         const ElementInfo &info) {
  std::string why;
  // The rule first: with the OCP rule the factor differs too (2^-emax).
  map.getMapper().walk([&](arith::TruncFOp trunc) {
    if (why.empty() && isa<Float8E8M0FNUType>(trunc.getType()))
      why = "the scale exponent is rounded down (arith.truncf to f8E8M0FNU "
            "keeps the exponent bits: floor(log2 v), the OCP MX rule); "
            "nvfp4 rounds it up (2^ceil(log2(bamax / max_elem)), "
            "docs/Numerics.md 11.2)";
  });
  map.getMapper().walk([&](Operation *op) {
    if (!why.empty())
      return;
    if (auto mul = dyn_cast<arith::MulFOp>(op)) {
      for (Value operand : mul->getOperands())
        if (std::optional<uint64_t> bits = floatConstBits(operand);
            bits && operand.getType().isF32() &&
            !isF32Const(operand, reciprocalOf(info))) {
          float value;
          uint32_t narrow = static_cast<uint32_t>(*bits);
          std::memcpy(&value, &narrow, sizeof(value));
          why = "the block amax is multiplied by " + std::to_string(value) +
                ", not fp32(1/" + std::to_string(int64_t(info.max)) +
                ") for this element type";
        }
    }
  });
  if (why.empty())
    why = "the scale computation is not nvfp4's rule in the form of "
          "docs/Numerics.md 11.6 (v = bamax * fp32(1/max_elem); bits b; "
          "b <= 0x400000 ? 0 : min((b + 0x7FFFFF) >> 23, 254))";
  return why;
}

/// Whether `reduce` is the block amax of `x`: max |x| over the last
/// dimension of its (C / 32, 32) view, NaN skipped (arith.maxnumf), from +0.
static bool matchBlockAmax(linalg::ReduceOp reduce, Value x, int64_t rank,
                           std::string &why) {
  if (reduce.getNumDpsInputs() != 1 || reduce.getNumDpsInits() != 1 ||
      reduce.getDimensions() != ArrayRef<int64_t>{rank}) {
    why = "the block amax is not one reduction over the 32 elements of a "
          "block";
    return false;
  }
  Value blocked = reduce.getInputs()[0];
  auto expand = blocked.getDefiningOp<tensor::ExpandShapeOp>();
  // Canonicalization folds the expand_shape of a constant into a constant.
  DenseElementsAttr constantX, constantBlocked;
  bool sameConstant =
      matchPattern(x, m_Constant(&constantX)) &&
      matchPattern(blocked, m_Constant(&constantBlocked)) &&
      constantX.reshape(cast<ShapedType>(blocked.getType())) ==
          constantBlocked;
  if (!sameConstant && (!expand || expand.getSrc() != x)) {
    why = "the block amax is not taken over the tensor that is scaled";
    return false;
  }
  auto fill = reduce.getInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !isF32Const(fill.getInputs()[0], 0.0f)) {
    why = "the block amax does not start from +0.0";
    return false;
  }
  Block &body = reduce.getCombiner().front();
  Value yielded = body.getTerminator()->getOperand(0);
  if (auto maximum = yielded.getDefiningOp<arith::MaximumFOp>()) {
    why = "the block amax uses arith.maximumf, which propagates NaN; nvfp4 "
          "skips NaN elements (arith.maxnumf)";
    return false;
  }
  auto max = yielded.getDefiningOp<arith::MaxNumFOp>();
  Value in = body.getArgument(0), acc = body.getArgument(1);
  if (max) {
    Value magnitude = max.getLhs() == acc   ? max.getRhs()
                      : max.getRhs() == acc ? max.getLhs()
                                            : Value();
    auto abs = magnitude ? magnitude.getDefiningOp<math::AbsFOp>()
                         : math::AbsFOp();
    Value source = abs ? abs.getOperand() : Value();
    if (source && source != in)
      if (auto ext = source.getDefiningOp<arith::ExtFOp>())
        source = ext.getIn();
    if (source == in)
      return true;
  }
  why = "the block amax is not max |x| (math.absf, arith.maxnumf)";
  return false;
}

/// A code chosen by the element's sign: select(negative, neg, pos), or the
/// constant itself when both are the same.
static bool isSignedCode(Value value, Value negative, uint64_t negCode,
                         uint64_t posCode) {
  if (negCode == posCode)
    if (std::optional<uint64_t> bits = floatConstBits(value))
      return *bits == posCode;
  auto select = value.getDefiningOp<arith::SelectOp>();
  if (!select || select.getCondition() != negative)
    return false;
  std::optional<uint64_t> neg = floatConstBits(select.getTrueValue());
  std::optional<uint64_t> pos = floatConstBits(select.getFalseValue());
  return neg && pos && *neg == negCode && *pos == posCode;
}

/// Whether `map` is the non-finite fix-up of the form applied to
/// (`x`, `converted`): finite ? q : (isnan ? NaN code : +-max code).
static bool isNonFiniteFixup(linalg::MapOp map, Value x, Value converted,
                             const ElementInfo &info) {
  if (map.getInputs().size() != 2 || map.getInputs()[0] != x ||
      map.getInputs()[1] != converted)
    return false;
  Block &body = map.getMapper().front();
  Value xi = body.getArgument(0), qi = body.getArgument(1);
  auto result = body.getTerminator()->getOperand(0).getDefiningOp<arith::SelectOp>();
  if (!result || result.getTrueValue() != qi)
    return false;
  auto finite = result.getCondition().getDefiningOp<math::IsFiniteOp>();
  auto special = result.getFalseValue().getDefiningOp<arith::SelectOp>();
  if (!finite || finite.getOperand() != xi || !special)
    return false;
  auto nan = special.getCondition().getDefiningOp<math::IsNaNOp>();
  if (!nan || nan.getOperand() != xi)
    return false;
  // The sign: bitcast to an integer, < 0. Found through the NaN or the max
  // code's select (a constant when both signs give one code).
  Value negative;
  for (Value code : {special.getTrueValue(), special.getFalseValue()})
    if (auto select = code.getDefiningOp<arith::SelectOp>())
      negative = select.getCondition();
  auto isNegative = negative ? negative.getDefiningOp<arith::CmpIOp>()
                             : arith::CmpIOp();
  auto toBits = isNegative ? isNegative.getLhs().getDefiningOp<arith::BitcastOp>()
                           : arith::BitcastOp();
  if (!isNegative || isNegative.getPredicate() != arith::CmpIPredicate::slt ||
      !isIntConst(isNegative.getRhs(), 0) || !toBits || toBits.getIn() != xi)
    return false;
  uint64_t nanNeg = info.nanKeepsSign ? info.nanCode | info.signBit : info.nanCode;
  return isSignedCode(special.getTrueValue(), negative, nanNeg, info.nanCode) &&
         isSignedCode(special.getFalseValue(), negative,
                      info.maxCode | info.signBit, info.maxCode);
}

//===----------------------------------------------------------------------===//
// The two analyses
//===----------------------------------------------------------------------===//

namespace {
struct TruncMatch {
  BlockScaledTensorType type;
  Value input;
  Value scales;  ///< the [..., C / 32] E8M0 tensor of the form
  Value codes;   ///< the value that holds the element codes
  Operation *fixup = nullptr;
};
} // namespace

static FailureOr<TruncMatch> analyzeTrunc(arith::ScalingTruncFOp op,
                                          std::string &why) {
  auto inputType = dyn_cast<RankedTensorType>(op.getIn().getType());
  if (!inputType) {
    why = "not a tensor: nvfp4 ops take tensors";
    return failure();
  }
  if (!checkShape(inputType, why) ||
      !checkWide(inputType.getElementType(), /*isInput=*/true, why) ||
      !checkScaleType(op.getScale().getType(), why))
    return failure();
  Type element = getElementTypeOrSelf(op.getType());
  std::optional<ElementInfo> info = checkElement(element, why);
  if (!info)
    return failure();
  if (std::optional<arith::RoundingMode> mode = op.getRoundingmode();
      mode && *mode != arith::RoundingMode::to_nearest_even) {
    why = "rounding mode " + arith::stringifyRoundingMode(*mode).str() +
          ": the MX quantization rounds to nearest even";
    return failure();
  }
  int64_t rank = inputType.getRank();
  Value scales = matchBlockBroadcast(op.getScale(), rank, why);
  if (!scales)
    return failure();
  auto map = scales.getDefiningOp<linalg::MapOp>();
  if (!map || map.getInputs().size() != 1) {
    why = "the block scales are not computed here from the block amax "
          "(nvfp4.quantize computes its own)";
    return failure();
  }
  if (!isScaleRule(map, *info)) {
    why = describeScaleMismatch(map, *info);
    return failure();
  }
  auto reduce = map.getInputs()[0].getDefiningOp<linalg::ReduceOp>();
  if (!reduce) {
    why = "the scale is not computed from a block amax (linalg.reduce)";
    return failure();
  }
  if (!matchBlockAmax(reduce, op.getIn(), rank, why))
    return failure();

  TruncMatch match;
  match.type = BlockScaledTensorType::get(
      op.getContext(), inputType.getShape(), element,
      Float8E8M0FNUType::get(op.getContext()), {1, kBlock},
      ScaleLayout::Linear);
  match.input = op.getIn();
  match.scales = scales;
  match.codes = op.getResult();
  arith::FastMathFlags flags =
      op.getFastmath().value_or(arith::FastMathFlags::none);
  bool finiteOnly = arith::bitEnumContainsAll(
      flags, arith::FastMathFlags::nnan | arith::FastMathFlags::ninf);
  if (op->hasOneUse())
    if (auto fixup = dyn_cast<linalg::MapOp>(*op->user_begin());
        fixup && isNonFiniteFixup(fixup, op.getIn(), op.getResult(), *info)) {
      match.codes = fixup.getResult()[0];
      match.fixup = fixup;
      return match;
    }
  if (finiteOnly)
    return match;
  why = "non-finite elements: arith.truncf to " + str(element) +
        " leaves +-Inf and NaN to the target (NaN for +-Inf in f8E4M3FN, "
        "+-Inf in f8E5M2, unspecified in f4E2M1FN) where nvfp4 saturates "
        "to +-max and writes NaN as section 11.1 says; give the op "
        "fastmath<nnan,ninf> or follow it by the fix-up of "
        "docs/Numerics.md 11.6";
  return failure();
}

namespace {
struct ExtMatch {
  BlockScaledTensorType type;
  Value scales;
};
} // namespace

static FailureOr<ExtMatch> analyzeExt(arith::ScalingExtFOp op,
                                      std::string &why) {
  auto codesType = dyn_cast<RankedTensorType>(op.getIn().getType());
  if (!codesType) {
    why = "not a tensor: nvfp4 ops take tensors";
    return failure();
  }
  if (!checkShape(codesType, why) ||
      !checkWide(getElementTypeOrSelf(op.getType()), /*isInput=*/false, why) ||
      !checkScaleType(op.getScale().getType(), why))
    return failure();
  if (!checkElement(codesType.getElementType(), why))
    return failure();
  Value scales = matchBlockBroadcast(op.getScale(), codesType.getRank(), why);
  if (!scales)
    return failure();
  DenseElementsAttr constant;
  if (matchPattern(scales, m_Constant(&constant)))
    for (APFloat value : constant.getValues<APFloat>())
      if (value.isNaN()) {
        why = "a constant NaN scale (0xFF), which nvfp4.pack rejects (C4)";
        return failure();
      }
  return ExtMatch{BlockScaledTensorType::get(
                      op.getContext(), codesType.getShape(),
                      codesType.getElementType(),
                      Float8E8M0FNUType::get(op.getContext()), {1, kBlock},
                      ScaleLayout::Linear),
                  scales};
}

std::string mlir::nvfp4::whyNotRaisable(Operation *op) {
  std::string why;
  if (auto trunc = dyn_cast<arith::ScalingTruncFOp>(op))
    (void)analyzeTrunc(trunc, why);
  else if (auto ext = dyn_cast<arith::ScalingExtFOp>(op))
    (void)analyzeExt(ext, why);
  else
    why = "not an upstream scaling op";
  return why;
}

//===----------------------------------------------------------------------===//
// Patterns and pass
//===----------------------------------------------------------------------===//

namespace {
struct RaiseScalingTruncF : OpRewritePattern<arith::ScalingTruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ScalingTruncFOp op,
                                PatternRewriter &rewriter) const override {
    std::string why;
    FailureOr<TruncMatch> match = analyzeTrunc(op, why);
    if (failed(match))
      return rewriter.notifyMatchFailure(op, why);
    // After the scale computation: the input dominates it, and it dominates
    // every use of the scales and of the codes.
    rewriter.setInsertionPointAfterValue(match->scales);
    Location loc = op.getLoc();
    Value quantized =
        QuantizeOp::create(rewriter, loc, match->type, match->input,
                           /*amax=*/Value(), /*seed=*/Value());
    auto parts = UnpackOp::create(rewriter, loc, match->type.getCodesType(),
                                  match->type.getScalesType(),
                                  rewriter.getF32Type(), quantized);
    rewriter.replaceAllUsesWith(match->codes, parts.getCodes());
    rewriter.replaceAllUsesWith(match->scales, parts.getScales());
    if (match->fixup)
      rewriter.eraseOp(match->fixup);
    rewriter.eraseOp(op);
    // A pack of exactly these parts with amax 0 (the form the lowering
    // writes) is the quantized value itself: an MX quantize's amax part is 0.
    for (Operation *user : llvm::make_early_inc_range(parts.getCodes().getUsers()))
      if (auto pack = dyn_cast<PackOp>(user);
          pack && pack.getScales() == parts.getScales() &&
          pack.getType() == match->type && isF32Const(pack.getAmax(), 0.0f))
        rewriter.replaceOp(pack, quantized);
    return success();
  }
};

struct RaiseScalingExtF : OpRewritePattern<arith::ScalingExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ScalingExtFOp op,
                                PatternRewriter &rewriter) const override {
    std::string why;
    FailureOr<ExtMatch> match = analyzeExt(op, why);
    if (failed(match))
      return rewriter.notifyMatchFailure(op, why);
    Location loc = op.getLoc();
    // Codes and scales unpacked from one MX value of this type: dequantize
    // that value (an MX dequantize does not read the amax part).
    auto unpack = op.getIn().getDefiningOp<UnpackOp>();
    Value packed;
    if (unpack && unpack.getScales() == match->scales &&
        unpack.getInput().getType() == match->type) {
      packed = unpack.getInput();
    } else {
      Value zero = arith::ConstantOp::create(rewriter, loc,
                                             rewriter.getF32FloatAttr(0.0f));
      packed = PackOp::create(rewriter, loc, match->type, op.getIn(),
                              match->scales, zero);
    }
    rewriter.replaceOpWithNewOp<DequantizeOp>(op, op.getType(), packed);
    return success();
  }
};

struct RaiseUpstreamScalingPass
    : public mlir::nvfp4::impl::NVFP4RaiseUpstreamScalingBase<
          RaiseUpstreamScalingPass> {
  using Base::Base;
  void runOnOperation() override {
    if (emitRemarks)
      getOperation()->walk([](Operation *op) {
        if (!isa<arith::ScalingTruncFOp, arith::ScalingExtFOp>(op))
          return;
        if (std::string why = whyNotRaisable(op); !why.empty())
          op->emitRemark() << "left unchanged: " << why;
      });
    RewritePatternSet patterns(&getContext());
    populateRaiseUpstreamScalingPatterns(patterns);
    // No folding: a quantize of a constant would become constants here, and
    // the pass is to raise, not to evaluate (canonicalize does that).
    if (failed(applyPatternsGreedily(
            getOperation(), std::move(patterns),
            GreedyRewriteConfig().enableFolding(false))))
      signalPassFailure();
  }
};
} // namespace

void mlir::nvfp4::populateRaiseUpstreamScalingPatterns(
    RewritePatternSet &patterns) {
  patterns.add<RaiseScalingTruncF, RaiseScalingExtF>(patterns.getContext());
}
