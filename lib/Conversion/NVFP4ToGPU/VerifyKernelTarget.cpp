//===- VerifyKernelTarget.cpp - NVVM ops against the chip table ------------===//
//
// Part of the nvfp4 project.
//
// The last check before LLVM's NVPTX backend sees a kernel: an instruction
// the chip lacks must be a diagnostic here, never a "Cannot select" abort
// there. The chip table (nvfp4/Target/Chip.h) decides for the instruction
// families our generators emit; MLIR's NVVMRequiresSM traits decide for the
// rest. See the pass description in Passes.td for why MLIR 22.1.8's own
// check (#nvvm.target verification) is not enough.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Conversion/Passes.h"
#include "nvfp4/Target/Chip.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <optional>

namespace mlir {
namespace nvfp4 {
#define GEN_PASS_DEF_NVFP4VERIFYKERNELTARGET
#include "nvfp4/Conversion/Passes.h.inc"
} // namespace nvfp4
} // namespace mlir

using namespace mlir;
using ::nvfp4::target::ChipInfo;
using ::nvfp4::target::Instruction;

/// The chip-table instruction family of an NVVM op, if it belongs to one.
static std::optional<Instruction> instructionFamilyOf(StringRef name) {
  if (name.starts_with("nvvm.tcgen05."))
    return Instruction::Tcgen05BlockScaleMma;
  if (name == "nvvm.mma.block_scale")
    return Instruction::MmaSyncBlockScale;
  if (name.starts_with("nvvm.wgmma."))
    return Instruction::Wgmma;
  if (name.starts_with("nvvm.cp.async.bulk."))
    return Instruction::Tma;
  if (name == "nvvm.convert.f32x2.to.f4x2")
    return Instruction::CvtE2M1x2;
  if (name == "nvvm.convert.f32x4.to.f4x4")
    return Instruction::CvtRsE2M1x4;
  if (name == "nvvm.convert.f32x2.to.f8x2")
    return Instruction::CvtE4M3x2;
  return std::nullopt;
}

namespace {
struct NVFP4VerifyKernelTargetPass
    : public mlir::nvfp4::impl::NVFP4VerifyKernelTargetBase<
          NVFP4VerifyKernelTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    const ChipInfo *info = ::nvfp4::target::lookupChip(chip);
    if (!info) {
      getOperation().emitError()
          << "unsupported chip '" << chip
          << "' (supported: " << ::nvfp4::target::supportedChipNames() << ")";
      return signalPassFailure();
    }
    NVVM::NVVMCheckSMVersion target =
        NVVM::NVVMCheckSMVersion::getTargetSMVersionFromStr(chip);
    WalkResult result = getOperation().walk([&](Operation *op) {
      // What the lowering to LLVM left behind has no translation: an
      // arith/math op on a type LLVM cannot lower (e.g. arith.truncf to
      // f8E8M0FNU, which has no conversion of nvfp4's) would otherwise end
      // in "missing LLVMTranslationDialectInterface registration".
      if (isa<arith::ArithDialect, math::MathDialect>(op->getDialect())) {
        auto kernel = op->getParentOfType<LLVM::LLVMFuncOp>();
        op->emitOpError()
            << "has no GPU lowering"
            << (kernel ? " (in kernel '" + kernel.getName().str() + "')" : "")
            << ": write it with integer ops, arith.scaling_truncf / "
               "scaling_extf or the nvfp4 ops";
        return WalkResult::interrupt();
      }
      if (std::optional<Instruction> family =
              instructionFamilyOf(op->getName().getStringRef())) {
        if (info->has(*family))
          return WalkResult::advance();
        op->emitOpError() << "needs "
                          << ::nvfp4::target::instructionName(*family)
                          << ", which " << chip << " does not have";
        return WalkResult::interrupt();
      }
      auto smTrait = dyn_cast<NVVM::RequiresSMInterface>(op);
      if (!smTrait ||
          smTrait.getRequiredMinSMVersion().isCompatibleWith(target))
        return WalkResult::advance();
      op->emitOpError() << "is not supported on " << chip;
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    if (attachTarget)
      getOperation().setTargetsAttr(ArrayAttr::get(
          &getContext(),
          {NVVM::NVVMTargetAttr::get(&getContext(), /*optLevel=*/3,
                                     "nvptx64-nvidia-cuda", chip,
                                     info->llvmFeatures, nullptr, nullptr,
                                     /*verifyTarget=*/false)}));
  }
};
} // namespace
