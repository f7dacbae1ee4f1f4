//===- ApplyRecipe.cpp - the nvfp4-apply-recipe pass ----------------------===//
//
// Part of the nvfp4 project.
//
// Rewrites NVFP4-assigned linalg contractions into the training recipe of
// docs/Numerics.md section 7: each operand is brought into the K-last form
// nvfp4.scaled_matmul reads ([batch, rows, K]), optionally Hadamard
// transformed, and quantized with the block shape and rounding of its role.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Dialect/NVFP4/Transforms/ApplyRecipe.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"
#include "nvfp4/Dialect/NVFP4/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/Twine.h"

namespace mlir {
namespace nvfp4 {
#define GEN_PASS_DEF_NVFP4APPLYRECIPE
#include "nvfp4/Dialect/NVFP4/Transforms/Passes.h.inc"
} // namespace nvfp4
} // namespace mlir

using namespace mlir;
using namespace mlir::nvfp4;

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

/// Rows of operand `operand` in K-last form: M for A, N for B.
static int64_t operandRows(const GemmShape &shape, int operand) {
  return operand == 0 ? shape.m : shape.n;
}

GemmRecipe mlir::nvfp4::planRecipe(const GemmInfo &gemm,
                                   const RecipeOptions &options,
                                   SmallVectorImpl<std::string> *notes) {
  GemmRecipe recipe;
  recipe.role = gemm.role;
  if (gemm.precision == Precision::MXFP8 ||
      gemm.precision == Precision::MXFP4) {
    // TE's MXFP8BlockScaling uses E4M3 for every operand by default; its
    // HYBRID format E5M2 for the gradients (dY of dgrad, dY^T of wgrad).
    BlockScaledFormat format = gemm.precision == Precision::MXFP8
                                   ? BlockScaledFormat::MXFP8E4M3
                                   : BlockScaledFormat::MXFP4;
    for (int operand = 0; operand < 2; ++operand) {
      bool gradient = gemm.role != GemmRole::Fprop &&
                      operand == gemm.gradientOperand;
      recipe.operands[operand].format =
          gradient && options.mxfp8GradientsE5M2 &&
                  format == BlockScaledFormat::MXFP8E4M3
              ? BlockScaledFormat::MXFP8E5M2
              : format;
    }
    return recipe;
  }
  auto stochastic = options.stochasticRounding ? RoundingMode::Stochastic
                                               : RoundingMode::NearestEven;
  for (int operand = 0; operand < 2; ++operand) {
    OperandRecipe &r = recipe.operands[operand];
    switch (gemm.role) {
    case GemmRole::Fprop:
    case GemmRole::Dgrad:
      if (operand == gemm.weightOperand && options.weight2D) {
        if (operandRows(gemm.shape, operand) % kBlockSize == 0) {
          r.twoDimensional = true;
        } else if (notes) {
          notes->push_back(
              (llvm::Twine("the weight has ") +
               llvm::Twine(operandRows(gemm.shape, operand)) +
               " rows, not a multiple of 16: quantized with 1x16 blocks")
                  .str());
        }
      }
      if (gemm.role == GemmRole::Dgrad && operand == gemm.gradientOperand)
        r.rounding = stochastic;
      break;
    case GemmRole::Wgrad:
      r.hadamard = options.rht;
      if (operand == gemm.gradientOperand)
        r.rounding = stochastic;
      break;
    }
  }
  return recipe;
}

bool mlir::nvfp4::isBlockScaledPrecision(Precision precision) {
  return precision == Precision::NVFP4 || precision == Precision::MXFP8 ||
         precision == Precision::MXFP4;
}

std::optional<std::string>
mlir::nvfp4::checkRecipeApplicable(const GemmInfo &gemm, Precision precision) {
  linalg::LinalgOp op = gemm.op;
  if (!op.hasPureTensorSemantics())
    return std::string("the GEMM does not operate on tensors");
  for (Value operand : gemm.op->getOperands())
    if (!isa<BFloat16Type, Float16Type, Float32Type>(
            getElementTypeOrSelf(operand.getType())))
      return std::string("element types other than bf16, f16 and f32 cannot "
                         "be quantized");
  if (!gemm.shape.isStatic())
    return std::string("the GEMM shape is dynamic");
  if (gemm.shape.batch == 0 || gemm.shape.m == 0 || gemm.shape.n == 0 ||
      gemm.shape.k == 0)
    return std::string("the GEMM has an empty dimension");
  // The quantized operands must be valid !nvfp4.tensor types (rule T6),
  // and the product a valid nvfp4.scaled_matmul result (scaled_matmul_c4).
  for (Value input : op.getDpsInputs())
    if (!getBoundedElementCount(cast<ShapedType>(input.getType()).getShape()))
      return std::string("the GEMM is too large to quantize (an operand has "
                         "more than 2^47 elements)");
  for (Value result : op->getResults())
    if (!getBoundedElementCount(cast<ShapedType>(result.getType()).getShape()))
      return std::string("the GEMM is too large to quantize (its result has "
                         "more than 2^47 elements)");
  bool mx = precision == Precision::MXFP8 || precision == Precision::MXFP4;
  int64_t block = mx ? kMXBlockSize : kBlockSize;
  if (gemm.shape.k % block != 0)
    return (llvm::Twine("the contraction dimension ") +
            llvm::Twine(gemm.shape.k) + " is not a multiple of " +
            llvm::Twine(block) + (mx ? " (the MX block)" : ""))
        .str();
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Seeds
//===----------------------------------------------------------------------===//

static constexpr uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ull;
static constexpr uint64_t kMix1 = 0xBF58476D1CE4E5B9ull;
static constexpr uint64_t kMix2 = 0x94D049BB133111EBull;

uint64_t mlir::nvfp4::deriveStreamSeed(uint64_t seed, uint64_t streamIndex) {
  uint64_t z = seed + kGoldenGamma * (streamIndex + 1);
  z = (z ^ (z >> 30)) * kMix1;
  z = (z ^ (z >> 27)) * kMix2;
  return z ^ (z >> 31);
}

Value mlir::nvfp4::buildStreamSeed(OpBuilder &b, Location loc, Value seed,
                                   uint64_t streamIndex) {
  auto constant = [&](uint64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                        static_cast<int64_t>(value));
  };
  auto xorShift = [&](Value z, uint64_t shift) -> Value {
    Value shifted = arith::ShRUIOp::create(b, loc, z, constant(shift));
    return arith::XOrIOp::create(b, loc, z, shifted);
  };
  Value z = arith::AddIOp::create(b, loc, seed,
                                  constant(kGoldenGamma * (streamIndex + 1)));
  z = arith::MulIOp::create(b, loc, xorShift(z, 30), constant(kMix1));
  z = arith::MulIOp::create(b, loc, xorShift(z, 27), constant(kMix2));
  return xorShift(z, 31);
}

/// `value` is `op(x, constant)` or `op(constant, x)` for an op of type Op
/// (commutative); returns x and the constant.
template <typename Op>
static bool matchWithConstant(Value value, Value &x, uint64_t &constant) {
  auto op = value.getDefiningOp<Op>();
  if (!op)
    return false;
  for (auto [a, b] : {std::pair(op.getLhs(), op.getRhs()),
                      std::pair(op.getRhs(), op.getLhs())}) {
    if (std::optional<int64_t> c = getConstantIntValue(b)) {
      x = a;
      constant = static_cast<uint64_t>(*c);
      return true;
    }
  }
  return false;
}

/// `value` is `z ^ (z >> shift)`; returns z.
static bool matchXorShift(Value value, uint64_t shift, Value &z) {
  auto xorOp = value.getDefiningOp<arith::XOrIOp>();
  if (!xorOp)
    return false;
  for (auto [a, b] : {std::pair(xorOp.getLhs(), xorOp.getRhs()),
                      std::pair(xorOp.getRhs(), xorOp.getLhs())}) {
    auto shr = b.getDefiningOp<arith::ShRUIOp>();
    if (shr && shr.getLhs() == a &&
        getConstantIntValue(shr.getRhs()) == static_cast<int64_t>(shift)) {
      z = a;
      return true;
    }
  }
  return false;
}

bool mlir::nvfp4::matchStreamSeed(Value value, Value &seed,
                                  uint64_t &streamIndex) {
  if (!value.getType().isInteger(64))
    return false;
  Value z3, m2, z2, m1, z1, base;
  uint64_t mix2, mix1, offset;
  if (!matchXorShift(value, 31, z3) ||
      !matchWithConstant<arith::MulIOp>(z3, m2, mix2) || mix2 != kMix2 ||
      !matchXorShift(m2, 27, z2) ||
      !matchWithConstant<arith::MulIOp>(z2, m1, mix1) || mix1 != kMix1 ||
      !matchXorShift(m1, 30, z1) ||
      !matchWithConstant<arith::AddIOp>(z1, base, offset))
    return false;
  // offset = kGoldenGamma * (streamIndex + 1) mod 2^64; the gamma is odd,
  // so it has an inverse modulo 2^64 (Newton's iteration doubles the
  // number of correct low bits each step: 5 steps from 3 bits reach 64).
  uint64_t inverse = kGoldenGamma;
  for (int i = 0; i < 5; ++i)
    inverse *= 2 - kGoldenGamma * inverse;
  uint64_t streams = offset * inverse;
  if (streams == 0 || streams > (uint64_t(1) << 32))
    return false;
  seed = base;
  streamIndex = streams - 1;
  return true;
}

//===----------------------------------------------------------------------===//
// Rewriting
//===----------------------------------------------------------------------===//

/// The MX type of `format` for a tensor of `shape`: its element type,
/// E8M0 scales per 1x32 block, linear scales.
static BlockScaledTensorType getMXTensorType(MLIRContext *ctx,
                                             ArrayRef<int64_t> shape,
                                             BlockScaledFormat format) {
  Type element;
  switch (format) {
  case BlockScaledFormat::MXFP8E5M2:
    element = Float8E5M2Type::get(ctx);
    break;
  case BlockScaledFormat::MXFP4:
    element = Float4E2M1FNType::get(ctx);
    break;
  default:
    element = Float8E4M3FNType::get(ctx);
    break;
  }
  int64_t block[] = {1, kMXBlockSize};
  return BlockScaledTensorType::get(ctx, shape, element,
                                    Float8E8M0FNUType::get(ctx), block,
                                    ScaleLayout::Linear);
}

/// Permutes `value` so that dimension i of the result is dimension
/// `permutation[i]` of `value`; no op for the identity.
static Value transposeIfNeeded(OpBuilder &b, Location loc, Value value,
                               ArrayRef<int64_t> permutation) {
  bool identity = llvm::all_of(llvm::enumerate(permutation), [](auto entry) {
    return int64_t(entry.index()) == entry.value();
  });
  if (identity)
    return value;
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation)
    shape.push_back(type.getDimSize(dim));
  Value init =
      tensor::EmptyOp::create(b, loc, shape, type.getElementType()).getResult();
  return linalg::TransposeOp::create(b, loc, value, init, permutation)
      .getResult()[0];
}

/// Reassociation that keeps each batch dimension and merges each following
/// group of `groupSizes` dimensions into one.
static SmallVector<ReassociationIndices>
groupReassociation(size_t numBatch, ArrayRef<size_t> groupSizes) {
  SmallVector<ReassociationIndices> reassociation;
  int64_t dim = 0;
  for (size_t i = 0; i < numBatch; ++i)
    reassociation.push_back({dim++});
  for (size_t size : groupSizes) {
    ReassociationIndices group;
    for (size_t i = 0; i < size; ++i)
      group.push_back(dim++);
    reassociation.push_back(group);
  }
  return reassociation;
}

/// Brings operand `operand` of the GEMM into the K-last form
/// [batch..., rows, K] that nvfp4.quantize and nvfp4.scaled_matmul read.
static Value buildKLastOperand(OpBuilder &b, Location loc, const GemmInfo &gemm,
                               int operand) {
  const linalg::ContractionDimensions &dims = gemm.shape.dims;
  ArrayRef<unsigned> rows = operand == 0 ? dims.m : dims.n;
  linalg::LinalgOp op = gemm.op;
  OpOperand *opOperand = op.getDpsInputOperand(operand);
  AffineMap map = op.getMatchingIndexingMap(opOperand);

  SmallVector<int64_t> permutation;
  for (ArrayRef<unsigned> group :
       {ArrayRef<unsigned>(dims.batch), rows, ArrayRef<unsigned>(dims.k)})
    for (unsigned loop : group)
      permutation.push_back(
          *map.getResultPosition(getAffineDimExpr(loop, b.getContext())));
  Value value = transposeIfNeeded(b, loc, opOperand->get(), permutation);
  if (rows.size() == 1 && dims.k.size() == 1)
    return value;
  return tensor::CollapseShapeOp::create(
      b, loc, value,
      groupReassociation(dims.batch.size(), {rows.size(), dims.k.size()}));
}

/// Whether accumulating into `init` is a no-op: a fill with zero, a zero
/// constant, or tensor.empty (whose contents are undefined, so any value,
/// zero included, is a valid reading).
static bool isZeroTensor(Value init) {
  if (init.getDefiningOp<tensor::EmptyOp>())
    return true;
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
  return matchPattern(init, m_AnyZeroFloat());
}

FailureOr<Value> mlir::nvfp4::rewriteGemmWithRecipe(
    RewriterBase &rewriter, const GemmInfo &gemm, const GemmRecipe &recipe,
    function_ref<Value(OpBuilder &, Location)> makeSeed) {
  bool mx = recipe.operands[0].format != BlockScaledFormat::NVFP4;
  if (checkRecipeApplicable(gemm, mx ? Precision::MXFP4 : Precision::NVFP4))
    return failure();
  linalg::LinalgOp op = gemm.op;
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  const linalg::ContractionDimensions &dims = gemm.shape.dims;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);

  // Quantized operands.
  Value quantized[2];
  for (int operand = 0; operand < 2; ++operand) {
    const OperandRecipe &r = recipe.operands[operand];
    Value value = buildKLastOperand(rewriter, loc, gemm, operand);
    auto type = cast<RankedTensorType>(value.getType());
    if (r.hadamard) {
      // The RHT is defined on BF16 inputs (docs/Numerics.md section 4).
      // f32 rounds to BF16 once; f16 is as wide as BF16 (arith.truncf
      // rejects f16 -> bf16), so it goes through f32, exactly, first.
      if (type.getElementType().isF16())
        value = arith::ExtFOp::create(
            rewriter, loc, type.clone(rewriter.getF32Type()), value);
      if (!type.getElementType().isBF16()) {
        type = type.clone(rewriter.getBF16Type());
        value = arith::TruncFOp::create(rewriter, loc, type, value);
      }
      value = HadamardOp::create(rewriter, loc, value);
    }
    BlockScaledTensorType quantizedType;
    if (r.format == BlockScaledFormat::NVFP4) {
      SmallVector<int64_t> block = {r.twoDimensional ? kBlockSize : 1,
                                    kBlockSize};
      quantizedType = BlockScaledTensorType::get(ctx, type.getShape(), block);
    } else {
      quantizedType = getMXTensorType(ctx, type.getShape(), r.format);
    }
    Value seed = r.rounding == RoundingMode::Stochastic
                     ? makeSeed(rewriter, loc)
                     : Value();
    quantized[operand] = QuantizeOp::create(rewriter, loc, quantizedType, value,
                                            /*amax=*/Value(), seed, r.rounding);
  }

  // The product in [batch..., M, N], in the result element type unless the
  // init has to be accumulated (then in FP32, rounded once below).
  Value init = op.getDpsInits()[0];
  auto resultType = cast<RankedTensorType>(init.getType());
  bool accumulate = !isZeroTensor(init);
  Type productElementType =
      accumulate ? rewriter.getF32Type() : resultType.getElementType();
  auto lhsType = cast<BlockScaledTensorType>(quantized[0].getType());
  SmallVector<int64_t> productShape(lhsType.getBatchShape());
  productShape.push_back(gemm.shape.m);
  productShape.push_back(gemm.shape.n);
  auto matmul = ScaledMatmulOp::create(
      rewriter, loc, RankedTensorType::get(productShape, productElementType),
      /*result_amax=*/Type(), quantized[0], quantized[1], /*alpha=*/Value(),
      GemmRoleAttr::get(ctx, recipe.role));
  for (StringRef name : {ModelAnnotation::kLayer, ModelAnnotation::kKind,
                         ModelAnnotation::kPrecision})
    if (Attribute attr = op->getAttr(name))
      matmul->setAttr(name, attr);
  Value product = matmul.getResult();

  // Back to the loops of the result: [batch..., m..., n...], then the
  // result's own dimension order.
  SmallVector<unsigned> productLoops(dims.batch.begin(), dims.batch.end());
  llvm::append_range(productLoops, dims.m);
  llvm::append_range(productLoops, dims.n);
  if (dims.m.size() > 1 || dims.n.size() > 1) {
    SmallVector<int64_t> expandedShape;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    for (unsigned loop : productLoops)
      expandedShape.push_back(ranges[loop]);
    product = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(expandedShape, productElementType),
        product,
        groupReassociation(dims.batch.size(), {dims.m.size(), dims.n.size()}));
  }
  AffineMap resultMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<int64_t> permutation;
  for (AffineExpr expr : resultMap.getResults()) {
    unsigned loop = cast<AffineDimExpr>(expr).getPosition();
    permutation.push_back(llvm::find(productLoops, loop) -
                          productLoops.begin());
  }
  product = transposeIfNeeded(rewriter, loc, product, permutation);

  if (accumulate) {
    // result = round(product + init), computed in FP32.
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(resultType.getRank(), ctx);
    SmallVector<utils::IteratorType> parallel(resultType.getRank(),
                                              utils::IteratorType::parallel);
    Type elementType = resultType.getElementType();
    product =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{resultType}, ValueRange{product},
            ValueRange{init}, ArrayRef<AffineMap>{identity, identity}, parallel,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value acc = args[1];
              if (elementType != b.getF32Type())
                acc = arith::ExtFOp::create(b, l, b.getF32Type(), acc);
              Value sum = arith::AddFOp::create(b, l, args[0], acc);
              if (elementType != b.getF32Type())
                sum = arith::TruncFOp::create(b, l, elementType, sum);
              linalg::YieldOp::create(b, l, sum);
            })
            .getResult(0);
  }
  rewriter.replaceOp(op, product);
  return product;
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

/// Emits the remarks that go with rewriting `gemm` by `recipe`.
static void remarkOnRecipe(const GemmInfo &gemm, ArrayRef<std::string> notes) {
  if (gemm.roleSource == RoleSource::Assumed)
    gemm.op->emitRemark() << "nvfp4-apply-recipe: " << gemm.roleNote
                          << "; applied the conservative fprop recipe (round "
                             "to nearest, no RHT)";
  for (const std::string &note : notes)
    gemm.op->emitRemark() << "nvfp4-apply-recipe: " << note;
}

/// Whether the GEMM is assigned a block-scaled format.
static bool isAssignedBlockScaled(const GemmInfo &gemm) {
  return gemm.precision && isBlockScaledPrecision(*gemm.precision);
}

LogicalResult mlir::nvfp4::applyRecipe(Operation *root,
                                       const RecipeOptions &options) {
  GemmAnalysis analysis(root);
  IRRewriter rewriter(root->getContext());
  uint64_t streamIndex = 0;
  bool failedSeed = false;
  bool failedPrecision = false;
  for (const GemmInfo &gemm : analysis.getGemms()) {
    // FP8 GEMMs have no lowering yet: an annotation asking for one must not
    // silently run in BF16 (nor be reported as FP8).
    if (gemm.precision == Precision::FP8) {
      gemm.op->emitError()
          << "nvfp4-apply-recipe: nvfp4.precision = \"fp8\" is not "
             "supported yet (FP8 GEMMs have no lowering); use \"nvfp4\" or "
             "\"bf16\"";
      failedPrecision = true;
      continue;
    }
    if (!isAssignedBlockScaled(gemm))
      continue;
    // nvfp4-assign-precision only assigns a format where the recipe
    // applies, so this is an explicit annotation the recipe cannot honour:
    // a warning, as the user asked for something else.
    if (std::optional<std::string> why =
            checkRecipeApplicable(gemm, *gemm.precision)) {
      gemm.op->emitWarning()
          << "nvfp4-apply-recipe: nvfp4.precision = \""
          << stringifyPrecision(*gemm.precision)
          << "\" cannot be honoured: " << *why << "; kept in bf16";
      gemm.op->setAttr(
          ModelAnnotation::kPrecision,
          rewriter.getStringAttr(stringifyPrecision(Precision::BF16)));
      continue;
    }

    SmallVector<std::string> notes;
    GemmRecipe recipe = planRecipe(gemm, options, &notes);

    // The base seed: the option, or the function's seed argument.
    bool needsSeed = llvm::any_of(recipe.operands, [](const OperandRecipe &r) {
      return r.rounding == RoundingMode::Stochastic;
    });
    Value seedArgument;
    if (needsSeed && options.seedArgument >= 0) {
      auto function = gemm.op->getParentOfType<FunctionOpInterface>();
      unsigned index = options.seedArgument;
      if (!function || index >= function.getNumArguments() ||
          !function.getArgument(index).getType().isInteger(64)) {
        gemm.op->emitError()
            << "nvfp4-apply-recipe: seed-argument=" << options.seedArgument
            << " does not name an i64 argument of the "
               "enclosing function";
        failedSeed = true;
        continue;
      }
      seedArgument = function.getArgument(index);
    }
    remarkOnRecipe(gemm, notes);
    auto makeSeed = [&](OpBuilder &b, Location loc) -> Value {
      uint64_t index = streamIndex++;
      if (seedArgument)
        return buildStreamSeed(b, loc, seedArgument, index);
      return arith::ConstantIntOp::create(
          b, loc, b.getI64Type(),
          static_cast<int64_t>(deriveStreamSeed(options.seed, index)));
    };
    if (failed(rewriteGemmWithRecipe(rewriter, gemm, recipe, makeSeed)))
      return gemm.op->emitError("nvfp4-apply-recipe: failed to rewrite");
  }
  return failure(failedSeed || failedPrecision);
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
struct NVFP4ApplyRecipePass
    : public nvfp4::impl::NVFP4ApplyRecipeBase<NVFP4ApplyRecipePass> {
  using Base::Base;

  void runOnOperation() override {
    RecipeOptions options;
    options.rht = rht;
    options.stochasticRounding = stochasticRounding;
    options.weight2D = weight2D;
    options.seed = seed;
    options.seedArgument = seedArgument;
    if (mxfp8Gradients == "e5m2") {
      options.mxfp8GradientsE5M2 = true;
    } else if (mxfp8Gradients != "e4m3") {
      getOperation().emitError()
          << "nvfp4-apply-recipe: mxfp8-gradients='" << mxfp8Gradients
          << "': expected e4m3 or e5m2";
      return signalPassFailure();
    }
    if (failed(applyRecipe(getOperation(), options)))
      signalPassFailure();
  }
};
} // namespace
