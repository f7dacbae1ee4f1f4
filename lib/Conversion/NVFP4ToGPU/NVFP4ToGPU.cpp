//===- NVFP4ToGPU.cpp - the convert-nvfp4-to-gpu pass ---------------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Conversion/NVFP4ToGPU/NVFP4ToGPU.h"
#include "nvfp4/Conversion/Passes.h"
#include "nvfp4/Conversion/Utils/BoundaryConversion.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h"

#include "KernelBuilder.h"
#include "LinalgKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace nvfp4 {
#define GEN_PASS_DEF_CONVERTNVFP4TOGPU
#include "nvfp4/Conversion/Passes.h.inc"
} // namespace nvfp4
} // namespace mlir

using namespace mlir;
using namespace mlir::nvfp4;

GPUHostTypeConverter::GPUHostTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](BlockScaledTensorType type,
                   SmallVectorImpl<Type> &results) -> LogicalResult {
    MLIRContext *ctx = type.getContext();
    auto i8 = IntegerType::get(ctx, 8);
    // Two E2M1 codes per byte, even element in the low nibble; FP8 codes
    // (MXFP8) one per byte.
    SmallVector<int64_t> packed(type.getShape());
    if (isa<Float4E2M1FNType>(type.getElementType()))
      packed.back() /= 2;
    results.push_back(MemRefType::get(packed, i8));
    results.push_back(MemRefType::get(type.getScalesType().getShape(), i8));
    // The FP32 amax, kept as its bits: kernels reduce it with an integer
    // atomic max.
    results.push_back(MemRefType::get({1}, IntegerType::get(ctx, 32)));
    return success();
  });
}

/// The generated kernels live in `gpu.module @nvfp4_kernels`, found by name
/// (KernelBuilder.h). A symbol of that name the user wrote would receive
/// them -- and a user kernel named like a generated one would silently
/// replace it -- so the name is reserved: only a kernel module an earlier
/// run of this pass created (it carries kGeneratedKernelsAttrName) may be there.
static LogicalResult checkReservedSymbols(ModuleOp module) {
  Operation *symbol = SymbolTable::lookupSymbolIn(
      module, kernels::kKernelModuleName);
  if (!symbol || symbol->hasAttr(kGeneratedKernelsAttrName))
    return success();
  return symbol->emitError()
         << "the symbol @" << kernels::kKernelModuleName
         << " is reserved for the kernels convert-nvfp4-to-gpu generates; "
            "rename this "
         << symbol->getName();
}

/// Ops convert-nvfp4-to-gpu cannot lower yet, with the reason.
static LogicalResult checkSupportedOps(ModuleOp module,
                                       const ::nvfp4::target::ChipInfo &chip) {
  WalkResult result = module.walk([&](Operation *op) {
    if (isa<UnpackOp, SwizzleScalesOp>(op)) {
      op->emitOpError("has no GPU lowering yet: the GPU path keeps codes "
                      "packed two per byte, and repacking kernels do not "
                      "exist yet");
      return WalkResult::interrupt();
    }
    // The boundary conversion carries block-scaled values through
    // functions, calls, returns and scf ops, not through branches to other
    // blocks (their arguments are not converted).
    if (isa<BranchOpInterface>(op) &&
        llvm::any_of(op->getOperandTypes(),
                     [](Type t) { return isa<BlockScaledTensorType>(t); })) {
      op->emitOpError("passes a block-scaled tensor to another block, which "
                      "the GPU lowering does not support; use scf.if, or "
                      "pass the high-precision tensor");
      return WalkResult::interrupt();
    }
    // Kernels are specialized for their shapes (grid, loop bounds, names):
    // a dynamic size would be taken for kDynamic, INT64_MIN. amax and
    // hadamard accept dynamic shapes; the reference lowering handles them.
    if (!isa_and_present<NVFP4Dialect>(op->getDialect()))
      return WalkResult::advance();
    SmallVector<Type> types(op->getOperandTypes());
    llvm::append_range(types, op->getResultTypes());
    // The MX formats (issue 20) have quantize, dequantize and GEMM kernels
    // (MXKernels.cpp; the GEMM with or without an output amax); every other
    // op on them has CPU semantics only (the reference lowering).
    for (Type type : types) {
      auto blockScaled = dyn_cast<BlockScaledTensorType>(type);
      bool supported = isa<QuantizeOp, DequantizeOp, ScaledMatmulOp>(op);
      if (blockScaled && blockScaled.isMX() && !supported) {
        op->emitOpError("has no GPU lowering for ")
            << stringifyBlockScaledFormat(blockScaled.getFormat())
            << " yet (the GPU path quantizes, dequantizes and multiplies the "
               "MX formats; convert-nvfp4-to-reference runs the rest on the "
               "CPU)";
        return WalkResult::interrupt();
      }
    }
    for (Type type : types) {
      auto shaped = dyn_cast<ShapedType>(type);
      if (shaped && !shaped.hasStaticShape()) {
        op->emitOpError("needs static shapes on the GPU path, got ") << type;
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

namespace {
/// An empty tensor has nothing to launch a kernel over (its launch
/// geometry would be zero blocks, and the grid-stride amax kernel divides
/// by its chunk count): its amax is 0 with or without the RHT, and its RHT
/// is itself. Only amax and hadamard can see one; `!nvfp4.tensor` is never
/// empty (rule T1), so no other op has an empty operand or result.
struct EmptyAmaxToConstant : OpRewritePattern<AmaxOp> {
  EmptyAmaxToConstant(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(AmaxOp op,
                                PatternRewriter &rewriter) const override {
    if (!llvm::is_contained(op.getInput().getType().getShape(), 0))
      return rewriter.notifyMatchFailure(op, "the input is not empty");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, rewriter.getF32FloatAttr(0.0f));
    return success();
  }
};

struct EmptyHadamardToInput : OpRewritePattern<HadamardOp> {
  EmptyHadamardToInput(MLIRContext *ctx)
      : OpRewritePattern(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(HadamardOp op,
                                PatternRewriter &rewriter) const override {
    if (!llvm::is_contained(op.getInput().getType().getShape(), 0))
      return rewriter.notifyMatchFailure(op, "the input is not empty");
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};

/// CUDA's limits on a launch: grid x < 2^31, y and z < 2^16, at least one
/// block; blocks of at most 1024 threads.
constexpr int64_t kMaxGridX = (int64_t(1) << 31) - 1;
constexpr int64_t kMaxGridYZ = 65535;
constexpr int64_t kMaxThreadsPerBlock = 1024;

/// Every launch the lowering built must be one a GPU can run: each kernel
/// generator computes its grid from the shape, and a shape too large for
/// one launch (or, before the rules above, an empty one) must be a
/// diagnostic here, not a manifest with grid 0 or 2^35 that the runtime
/// rejects later.
static LogicalResult checkLaunchGeometry(ModuleOp module) {
  WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
    if (launch.getKernelModuleName() != kernels::kKernelModuleName)
      return WalkResult::advance();
    auto constant = [](Value v) { return getConstantIntValue(v); };
    std::array<std::optional<int64_t>, 3> grid = {
        constant(launch.getGridSizeX()), constant(launch.getGridSizeY()),
        constant(launch.getGridSizeZ())};
    std::array<std::optional<int64_t>, 3> block = {
        constant(launch.getBlockSizeX()), constant(launch.getBlockSizeY()),
        constant(launch.getBlockSizeZ())};
    bool gridOk = true;
    for (auto [i, g] : llvm::enumerate(grid))
      gridOk &= g && *g >= 1 && *g <= (i == 0 ? kMaxGridX : kMaxGridYZ);
    int64_t threads = 1;
    bool blockOk = true;
    for (std::optional<int64_t> d : block) {
      blockOk &= d && *d >= 1 && *d <= kMaxThreadsPerBlock;
      threads *= blockOk ? *d : 1;
    }
    blockOk &= threads <= kMaxThreadsPerBlock;
    if (gridOk && blockOk)
      return WalkResult::advance();
    auto print = [](std::array<std::optional<int64_t>, 3> dims) {
      std::string text;
      for (auto [i, d] : llvm::enumerate(dims))
        text += (i ? "x" : "") + (d ? std::to_string(*d) : std::string("?"));
      return text;
    };
    InFlightDiagnostic diag = launch.emitError()
                              << "kernel " << launch.getKernelName()
                              << " needs a launch of grid " << print(grid)
                              << ", block " << print(block);
    if (!gridOk)
      diag << ": a grid must have 1 to 2^31-1 blocks in x and 1 to 65535 in "
              "y and z (the tensor is too large for one launch)";
    else
      diag << ": a block must have 1 to 1024 threads";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

struct ConvertNVFP4ToGPUPass
    : public mlir::nvfp4::impl::ConvertNVFP4ToGPUBase<ConvertNVFP4ToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    const ::nvfp4::target::ChipInfo *chipInfo =
        ::nvfp4::target::lookupChip(chip);
    if (!chipInfo) {
      module.emitError() << "unsupported chip '" << chip << "' (supported: "
                         << ::nvfp4::target::supportedChipNames() << ")";
      return signalPassFailure();
    }
    if (failed(checkNoNVFP4OpsInGraphRegions(module)) ||
        failed(checkReservedSymbols(module)) ||
        failed(checkSupportedOps(module, *chipInfo)))
      return signalPassFailure();

    MLIRContext *ctx = &getContext();
    // Elementwise producers whose result an nvfp4.amax reads compute that
    // amax in their own kernel; this needs the amax still unconverted.
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal()
        .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled)
        .enableFolding(false)
        .enableConstantCSE(false);
    {
      RewritePatternSet amaxPatterns(ctx);
      populateProducerAmaxToGPUPatterns(amaxPatterns, *chipInfo);
      FrozenRewritePatternSet frozen(std::move(amaxPatterns));
      for (auto function : module.getOps<func::FuncOp>())
        (void)applyPatternsGreedily(function.getBody(), frozen, config);
    }

    GPUHostTypeConverter converter;
    RewritePatternSet patterns(ctx);
    patterns.add<EmptyAmaxToConstant, EmptyHadamardToInput>(ctx);
    std::string message;
    FailureOr<QuantizeSchedule> quantize =
        parseQuantizeSchedule(quantizeSchedule, message);
    if (failed(quantize)) {
      module.emitError() << message;
      return signalPassFailure();
    }
    populateQuantizeToGPUPatterns(converter, patterns, *chipInfo, *quantize);
    kernels::populateProducerQuantizeToGPUPatterns(converter, patterns,
                                                   *chipInfo);
    FailureOr<MXGemmKernel> mxGemmKernel = parseMXGemmKernel(mxGemm, message);
    if (failed(mxGemmKernel)) {
      module.emitError() << message;
      return signalPassFailure();
    }
    populateMXToGPUPatterns(converter, patterns, *chipInfo, *mxGemmKernel);
    if (failed(populateMatmulToGPUPatterns(converter, patterns, *chipInfo,
                                           gemmSchedule, message))) {
      module.emitError() << message;
      return signalPassFailure();
    }
    populateTransposeToGPUPatterns(converter, patterns);
    populatePackingToGPUPatterns(converter, patterns);

    ConversionTarget target(*ctx);
    target.addLegalDialect<arith::ArithDialect,
                           bufferization::BufferizationDialect,
                           gpu::GPUDialect, LLVM::LLVMDialect,
                           math::MathDialect,
                           memref::MemRefDialect, NVVM::NVVMDialect,
                           nvgpu::NVGPUDialect, scf::SCFDialect,
                           vector::VectorDialect>();
    populateBlockScaledBoundaryConversion(converter, patterns, target);

    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();

    // The linalg ops around them (LinalgKernels.cpp), on tensors that are
    // now device buffers: plain rewrites, nothing else simplified.
    RewritePatternSet linalgPatterns(ctx);
    populateLinalgToGPUPatterns(linalgPatterns, *chipInfo);
    populateScanToGPUPatterns(linalgPatterns);
    FrozenRewritePatternSet frozen(std::move(linalgPatterns));
    // Each pattern replaces a linalg op by launches: the rewriting ends.
    // What no pattern takes stays on the host, which nvfp4-compile reports.
    for (auto function : module.getOps<func::FuncOp>())
      (void)applyPatternsGreedily(function.getBody(), frozen, config);
    warnAboutHostLoops(module);
    warnAboutHostBF16Gemms(module, *chipInfo);
    if (failed(checkLaunchGeometry(module)))
      signalPassFailure();
  }
};
} // namespace
