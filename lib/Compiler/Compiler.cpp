//===- Compiler.cpp - nvfp4 IR to PTX, cubin and a kernel report ----------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Compiler/Compiler.h"
#include "nvfp4/Conversion/Passes.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"
#include "nvfp4/Dialect/NVFP4/Transforms/ApplyRecipe.h"
#include "nvfp4/Dialect/NVFP4/Transforms/AssignPrecision.h"
#include "nvfp4/Dialect/NVFP4/Transforms/Passes.h"
#include "nvfp4/Pipelines/Pipelines.h"
#include "nvfp4/Target/Chip.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

using namespace mlir;
using namespace mlir::nvfp4;

std::optional<EmitKind> mlir::nvfp4::parseEmitKind(StringRef text) {
  return llvm::StringSwitch<std::optional<EmitKind>>(text)
      .Case("mlir", EmitKind::MLIR)
      .Case("llvm", EmitKind::LLVM)
      .Case("ptx", EmitKind::PTX)
      .Case("cubin", EmitKind::Cubin)
      .Default(std::nullopt);
}

std::string mlir::nvfp4::findPtxas(StringRef explicitPath) {
  if (!explicitPath.empty())
    return llvm::sys::fs::can_execute(explicitPath) ? explicitPath.str() : "";
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  StringRef cuda = "/usr/local/cuda/bin/ptxas";
  return llvm::sys::fs::can_execute(cuda) ? cuda.str() : "";
}

/// The nvfp4 op a generated kernel implements, from its name.
static std::string sourceOpOf(StringRef kernelName) {
  for (StringRef op : {"amax", "quantize", "dual_quantize", "dequantize",
                       "hadamard", "scaled_matmul"})
    if (kernelName.starts_with(("nvfp4_" + op + "_").str()))
      return ("nvfp4." + op).str();
  return "";
}

static int64_t constantOr(Value value, int64_t fallback) {
  if (std::optional<int64_t> c = getConstantIntValue(value))
    return *c;
  return fallback;
}

/// The value a buffer or scalar operand derives from, looking through
/// views, casts and tensor/buffer conversions. A scalar loaded from element
/// 0 of a one-element buffer (an amax the host function returns) is that
/// buffer: the manifest returns the buffer, whose bytes are the scalar's.
static Value rootOf(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def))
      value = collapse.getSrc();
    else if (auto expand = dyn_cast<memref::ExpandShapeOp>(def))
      value = expand.getSrc();
    else if (auto cast = dyn_cast<memref::CastOp>(def))
      value = cast.getSource();
    else if (auto toBuffer = dyn_cast<bufferization::ToBufferOp>(def))
      value = toBuffer.getTensor();
    else if (auto toTensor = dyn_cast<bufferization::ToTensorOp>(def))
      value = toTensor.getBuffer();
    else if (auto bitcast = dyn_cast<arith::BitcastOp>(def))
      value = bitcast.getIn();
    else if (auto load = dyn_cast<memref::LoadOp>(def);
             load && load.getMemRefType().getNumElements() == 1)
      value = load.getMemRef();
    else
      break;
  }
  return value;
}

/// Whether `op` of the host function only serves the launches: it
/// allocates, fills, views or casts buffers, builds tensor maps, launches,
/// reads back a scalar result, or returns. Everything else is computation
/// left on the host (HostComputation).
static bool isLaunchPlumbing(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return load.getMemRefType().getNumElements() == 1;
  return isa<func::ReturnOp, arith::ConstantOp, arith::BitcastOp,
             gpu::AllocOp, gpu::DeallocOp, gpu::MemsetOp, gpu::LaunchFuncOp,
             gpu::WaitOp, nvgpu::TmaCreateDescriptorOp,
             memref::CollapseShapeOp, memref::ExpandShapeOp, memref::CastOp,
             bufferization::ToBufferOp, bufferization::ToTensorOp,
             tensor::EmptyOp>(op);
}

/// "file:line:col" of `loc` (the file's base name), as the precision report
/// prints locations.
static std::string formatLocation(Location loc) {
  if (auto fileLoc = dyn_cast<FileLineColLoc>(loc))
    return (llvm::sys::path::filename(fileLoc.getFilename().getValue()) + ":" +
            llvm::Twine(fileLoc.getLine()) + ":" +
            llvm::Twine(fileLoc.getColumn()))
        .str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      return formatLocation(fused.getLocations().front());
  if (auto nameLoc = dyn_cast<NameLoc>(loc))
    return formatLocation(nameLoc.getChildLoc());
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return formatLocation(callSite.getCallee());
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

/// The manifest's name of a buffer element type. An f4E2M1FN element (one
/// code, nvfp4.pack's input) occupies one byte in memory (LLVM's store size
/// of i4), the code in the low nibble: the runtime moves it as an i8.
static std::string manifestElementType(Type type) {
  if (isa<Float4E2M1FNType>(type))
    return "i8";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// The index of `value` among the entry block arguments of `func`, or -1.
static int64_t argumentIndex(Value value, func::FuncOp func) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner() != &func.getBody().front())
    return -1;
  return arg.getArgNumber();
}

/// The bits a memset with `constant` writes into each element, when the
/// manifest can describe them: an f32 or a 32-bit integer.
static std::optional<uint32_t> fillBitsOf(Attribute constant) {
  if (auto f = dyn_cast<FloatAttr>(constant); f && f.getType().isF32())
    return static_cast<uint32_t>(
        f.getValue().bitcastToAPInt().getZExtValue());
  if (auto i = dyn_cast<IntegerAttr>(constant);
      i && i.getType().isInteger(32))
    return static_cast<uint32_t>(i.getValue().getZExtValue());
  return std::nullopt;
}

/// The manifest entry of a tensor map the host function creates (the GPU
/// lowering casts a ranked view of a buffer to the unranked operand).
static void describeTensorMap(nvgpu::TmaCreateDescriptorOp op,
                              KernelParam &param) {
  auto view = cast<MemRefType>(
      op.getTensor().getDefiningOp<memref::CastOp>().getSource().getType());
  nvgpu::TensorMapDescriptorType type = op.getTensorMap().getType();
  param.type = "tensormap";
  llvm::raw_string_ostream os(param.elementType);
  os << view.getElementType();
  param.dims.assign(view.getShape().begin(), view.getShape().end());
  for (Value extent : op.getBoxDimensions())
    param.box.push_back(constantOr(extent, -1));
  switch (type.getSwizzle()) {
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE: param.swizzle = "none"; break;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_32B: param.swizzle = "32B"; break;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_64B: param.swizzle = "64B"; break;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_128B: param.swizzle = "128B"; break;
  }
  switch (type.getL2promo()) {
  case nvgpu::TensorMapL2PromoKind::L2PROMO_NONE: param.l2Promotion = "none"; break;
  case nvgpu::TensorMapL2PromoKind::L2PROMO_64B: param.l2Promotion = "64B"; break;
  case nvgpu::TensorMapL2PromoKind::L2PROMO_128B: param.l2Promotion = "128B"; break;
  case nvgpu::TensorMapL2PromoKind::L2PROMO_256B: param.l2Promotion = "256B"; break;
  }
  param.oobFill =
      type.getOob() == nvgpu::TensorMapOOBKind::OOB_ZERO ? "zero" : "nan";
}

/// The functions of `module` (nested modules included) that launch
/// kernels, in walk order.
static SmallVector<func::FuncOp> findHostFunctions(ModuleOp module) {
  SmallVector<func::FuncOp> hosts;
  module.walk([&](func::FuncOp function) {
    WalkResult launches = function.walk(
        [](gpu::LaunchFuncOp) { return WalkResult::interrupt(); });
    if (launches.wasInterrupted())
      hosts.push_back(function);
  });
  return hosts;
}

/// Checks that the kernel manifest can describe `host`: nvfp4-run and the
/// runtime run its launches once each, in order, on buffers it allocates,
/// so the host code must be one block of launches -- no launch inside a
/// loop, branch or region of another op (scf.for/if/while, linalg.generic),
/// no call of a function that launches kernels, one buffer per result.
static LogicalResult checkDescribable(func::FuncOp host,
                                      ArrayRef<func::FuncOp> hosts) {
  StringRef name = host.getSymName();
  if (hosts.size() > 1) {
    func::FuncOp other = hosts[1];
    InFlightDiagnostic diag =
        other.emitError()
        << "the kernel manifest (--report) describes one host function, "
           "but @"
        << other.getSymName() << " launches kernels as well as @" << name
        << "; compile each function on its own";
    diag.attachNote(host.getLoc()) << "@" << name << " is here";
    return diag;
  }
  if (!host.getBody().hasOneBlock())
    return host.emitError()
           << "the kernel manifest (--report) describes straight-line host "
              "code, but @"
           << name << " has " << host.getBlocks().size()
           << " blocks (branches or several returns)";
  WalkResult walked = host.walk([&](Operation *op) {
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
        launch && launch->getParentOp() != host) {
      launch.emitError()
          << "the kernel manifest (--report) lists each launch once, in "
             "order, but this kernel is launched inside '"
          << launch->getParentOp()->getName() << "' in @" << name;
      return WalkResult::interrupt();
    }
    auto call = dyn_cast<CallOpInterface>(op);
    if (!call)
      return WalkResult::advance();
    auto callee = dyn_cast_or_null<func::FuncOp>(call.resolveCallable());
    if (callee && llvm::is_contained(hosts, callee)) {
      op->emitError() << "the kernel manifest (--report) cannot describe a "
                         "call of @"
                      << callee.getSymName() << ", which launches kernels";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walked.wasInterrupted());
}

/// Launch geometry, parameters and buffers of the host function's
/// launches (the first function that launches kernels), and what it leaves
/// on the host. With `requireManifest`, host code the manifest cannot
/// describe is an error.
static LogicalResult collectLaunches(ModuleOp module, CompileResult &result,
                                     bool requireManifest) {
  SmallVector<func::FuncOp> hosts = findHostFunctions(module);
  if (hosts.empty())
    return success();
  func::FuncOp host = hosts.front();
  if (requireManifest && failed(checkDescribable(host, hosts)))
    return failure();
  result.function = host.getSymName().str();
  llvm::DenseMap<Value, int64_t> bufferIds;
  // Host ops the manifest describes beyond plumbing (seed mixing).
  llvm::DenseSet<Operation *> describedOps;
  auto bufferFor = [&](Value operand) -> int64_t {
    Value root = rootOf(operand);
    auto [it, inserted] = bufferIds.try_emplace(root, result.buffers.size());
    if (inserted) {
      BufferInfo info;
      auto memref = cast<MemRefType>(operand.getType());
      info.elementType = manifestElementType(memref.getElementType());
      info.elements = memref.getNumElements();
      info.argument = argumentIndex(root, host);
      result.buffers.push_back(std::move(info));
    }
    return it->second;
  };

  WalkResult walked = host.walk([&](Operation *op) {
    if (auto memset = dyn_cast<gpu::MemsetOp>(op)) {
      int64_t id = bufferFor(memset.getDst());
      BufferInfo &info = result.buffers[id];
      // A memset overwrites the whole buffer: only the last one counts.
      info.zeroInitialized = false;
      info.fillFromArgument = -1;
      info.fillBits.reset();
      // rootOf looks through bit casts, which keep the bits a fill writes.
      Value value = rootOf(memset.getValue());
      Attribute constant;
      // -0.0 is not zero bits: it falls through to the constant case.
      if (matchPattern(value, m_Zero()) ||
          matchPattern(value, m_PosZeroFloat()))
        info.zeroInitialized = true;
      else if (matchPattern(value, m_Constant(&constant)))
        info.fillBits = fillBitsOf(constant);
      else
        info.fillFromArgument = argumentIndex(value, host);
      // Anything else would leave a runner's buffer uninitialized.
      if (!info.zeroInitialized && !info.fillBits &&
          info.fillFromArgument < 0) {
        memset.emitError("the kernel manifest cannot describe this buffer "
                         "fill (only zeros, a 32-bit constant or a scalar "
                         "argument of ")
            << result.function << ")";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
    if (!launch)
      return WalkResult::advance();
    KernelInfo info;
    info.name = launch.getKernelName().str();
    info.sourceOp = sourceOpOf(info.name);
    info.grid = {constantOr(launch.getGridSizeX(), -1),
                 constantOr(launch.getGridSizeY(), -1),
                 constantOr(launch.getGridSizeZ(), -1)};
    info.block = {constantOr(launch.getBlockSizeX(), -1),
                  constantOr(launch.getBlockSizeY(), -1),
                  constantOr(launch.getBlockSizeZ(), -1)};
    if (Value smem = launch.getDynamicSharedMemorySize())
      info.sharedMemoryBytes = constantOr(smem, -1);
    for (Value operand : launch.getKernelOperands()) {
      KernelParam param;
      if (auto map = operand.getDefiningOp<nvgpu::TmaCreateDescriptorOp>()) {
        describeTensorMap(map, param);
        param.buffer = bufferFor(
            map.getTensor().getDefiningOp<memref::CastOp>().getSource());
      } else if (auto memref = dyn_cast<MemRefType>(operand.getType())) {
        param.type = "ptr";
        param.elementType = manifestElementType(memref.getElementType());
        param.elements = memref.getNumElements();
        param.buffer = bufferFor(operand);
      } else {
        llvm::raw_string_ostream os(param.type);
        os << operand.getType();
        param.argument = argumentIndex(rootOf(operand), host);
        // A stochastic-rounding seed mixed from a seed argument
        // (nvfp4-apply-recipe seed-argument=N): the runtime redoes the
        // mixing at launch.
        Value base;
        uint64_t stream = 0;
        if (param.argument < 0 && matchStreamSeed(operand, base, stream) &&
            argumentIndex(rootOf(base), host) >= 0) {
          param.argument = argumentIndex(rootOf(base), host);
          param.seedStream = stream;
          // The mixing is described (the runtime redoes it): its ops are
          // not host computation.
          SmallVector<Value> worklist = {operand};
          while (!worklist.empty()) {
            Operation *def = worklist.pop_back_val().getDefiningOp();
            if (!def || !describedOps.insert(def).second)
              continue;
            for (Value input : def->getOperands())
              if (input != base)
                worklist.push_back(input);
          }
        }
        Attribute constant;
        if (matchPattern(operand, m_Constant(&constant))) {
          llvm::raw_string_ostream cs(param.constant);
          if (auto f = dyn_cast<FloatAttr>(constant))
            cs << f.getValueAsDouble();
          else if (auto i = dyn_cast<IntegerAttr>(constant))
            cs << i.getValue();
        }
      }
      info.params.push_back(std::move(param));
    }
    result.kernels.push_back(std::move(info));
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return failure();

  // Which buffers the host function returns (flattened results in order).
  WalkResult returns = host.walk([&](func::ReturnOp ret) {
    for (auto [index, operand] : llvm::enumerate(ret.getOperands())) {
      auto it = bufferIds.find(rootOf(operand));
      if (it == bufferIds.end())
        continue;
      BufferInfo &buffer = result.buffers[it->second];
      if (requireManifest && buffer.result >= 0) {
        ret.emitError() << "the kernel manifest (--report) gives each buffer "
                           "one result, but @"
                        << result.function << " returns buffer " << it->second
                        << " as results " << buffer.result << " and "
                        << index;
        return WalkResult::interrupt();
      }
      buffer.result = index;
    }
    return WalkResult::advance();
  });
  if (returns.wasInterrupted())
    return failure();

  // The computation no kernel covers: the top-level ops of the host
  // function that do not serve the launches (a region's ops belong to it).
  for (Operation &op : host.getBody().front()) {
    // Dead ops compute nothing anyone sees (a fill whose GEMM became NVFP4).
    if (isLaunchPlumbing(&op) || describedOps.contains(&op) ||
        isOpTriviallyDead(&op))
      continue;
    HostComputation entry;
    entry.op = op.getName().getStringRef().str();
    entry.location = formatLocation(op.getLoc());
    if (auto call = dyn_cast<CallOpInterface>(&op))
      if (auto symbol = dyn_cast_if_present<SymbolRefAttr>(
              call.getCallableForCallee()))
        entry.callee = symbol.getLeafReference().str();
    result.hostComputation.push_back(std::move(entry));
  }
  // At the function's location, without the function attached (an op's
  // diagnostic prints the op, here the whole model).
  if (!result.hostComputation.empty())
    mlir::emitWarning(host.getLoc()) << summarizeHostComputation(result);
  return success();
}

std::string
mlir::nvfp4::summarizeHostComputation(const CompileResult &result) {
  if (result.hostComputation.empty())
    return "";
  // Op names (calls by callee) with their count and first location, in
  // order of first appearance.
  llvm::MapVector<StringRef, std::pair<unsigned, std::string>> kinds;
  std::vector<std::string> keys;
  keys.reserve(result.hostComputation.size());
  for (const HostComputation &entry : result.hostComputation) {
    keys.push_back(entry.callee.empty() ? entry.op
                                        : entry.op + " @" + entry.callee);
    auto [it, inserted] = kinds.try_emplace(keys.back(), 0, entry.location);
    ++it->second.first;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "@" << result.function << " leaves " << result.hostComputation.size()
     << " operation" << (result.hostComputation.size() == 1 ? "" : "s")
     << " on the host that no kernel covers: ";
  unsigned shown = 0;
  for (auto &[key, countAndLocation] : kinds) {
    if (shown == 4) {
      os << ", ...";
      break;
    }
    os << (shown++ ? ", " : "") << countAndLocation.first << " x " << key
       << " (" << countAndLocation.second << ")";
  }
  os << "; the bundle is not runnable on its own (the --report manifest "
        "lists them under \"host_computation\")";
  return text;
}

/// Runs LLVM's NVPTX backend on the kernel module for `chip`.
static FailureOr<std::string>
emitPTX(gpu::GPUModuleOp kernels, const ::nvfp4::target::ChipInfo &chip,
        bool printLLVM, std::string &llvmText, TimingScope &timing) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });

  llvm::LLVMContext llvmContext;
  TimingScope translateTiming = timing.nest("translate to LLVM IR");
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(kernels, llvmContext, "nvfp4_kernels");
  translateTiming.stop();
  if (!llvmModule)
    return kernels.emitError("could not translate the kernels to LLVM IR");

  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return kernels.emitError("LLVM has no NVPTX backend: ") << error;
  llvm::TargetOptions targetOptions;
  // Never contract a*b+c into an fma the spec did not ask for: the bytes
  // must equal the reference.
  targetOptions.AllowFPOpFusion = llvm::FPOpFusion::Strict;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, chip.name, chip.llvmFeatures, targetOptions, std::nullopt,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return kernels.emitError("could not create an NVPTX target for ")
           << chip.name;
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());

  // The standard O3 pipeline for the target.
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // LLVM's instrumentation, so that -time-passes and -print-after=<pass>
  // also cover the optimizer (the legacy codegen pipeline has its own).
  llvm::PassInstrumentationCallbacks instrumentation;
  llvm::StandardInstrumentations standard(llvmContext,
                                          /*DebugLogging=*/false);
  standard.registerCallbacks(instrumentation, &mam);
  llvm::PassBuilder builder(machine.get(), llvm::PipelineTuningOptions(),
                            std::nullopt, &instrumentation);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  TimingScope optTiming = timing.nest("LLVM O3");
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(*llvmModule, mam);
  optTiming.stop();

  if (printLLVM) {
    llvm::raw_string_ostream os(llvmText);
    llvmModule->print(os, nullptr);
  }

  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream os(ptx);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                   llvm::CodeGenFileType::AssemblyFile))
    return kernels.emitError("the NVPTX backend cannot emit assembly");
  TimingScope codegenTiming = timing.nest("NVPTX backend");
  codegen.run(*llvmModule);
  return std::string(ptx);
}

/// Assembles `ptx` for `chip` with `ptxas -v`, returning the cubin and
/// filling register/spill statistics.
static FailureOr<std::string> runPtxas(Location loc, StringRef ptxas,
                                       StringRef ptx, StringRef chip,
                                       std::vector<KernelInfo> &kernels) {
  SmallString<128> ptxPath, cubinPath, logPath;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("nvfp4", "ptx", fd, ptxPath) ||
      llvm::sys::fs::createTemporaryFile("nvfp4", "cubin", cubinPath) ||
      llvm::sys::fs::createTemporaryFile("nvfp4", "log", logPath))
    return emitError(loc, "cannot create temporary files for ptxas");
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << ptx;
  }
  auto cleanup = llvm::make_scope_exit([&] {
    llvm::sys::fs::remove(ptxPath);
    llvm::sys::fs::remove(cubinPath);
    llvm::sys::fs::remove(logPath);
  });
  std::string arch = ("-arch=" + chip).str();
  SmallVector<StringRef> args = {ptxas, arch, "-v", "-o", cubinPath, ptxPath};
  std::optional<StringRef> redirects[] = {std::nullopt, logPath.str(),
                                          logPath.str()};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                         /*secondsToWait=*/0, 0, &error);
  auto log = llvm::MemoryBuffer::getFile(logPath);
  StringRef logText = log ? (*log)->getBuffer() : "";
  if (status != 0) {
    InFlightDiagnostic diag = emitError(loc) << "ptxas failed for " << chip;
    if (!error.empty())
      diag << ": " << error;
    if (!logText.empty())
      diag.attachNote() << logText.trim();
    return failure();
  }

  // "Compiling entry function 'K'", then "N bytes spill stores, M bytes
  // spill loads" and "Used R registers".
  llvm::Regex entry("Compiling entry function '([A-Za-z0-9_]+)'");
  llvm::Regex spills("([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  llvm::Regex registers("Used ([0-9]+) registers");
  KernelInfo *current = nullptr;
  SmallVector<StringRef> lines;
  logText.split(lines, '\n');
  for (StringRef line : lines) {
    SmallVector<StringRef> m;
    if (entry.match(line, &m)) {
      current = nullptr;
      for (KernelInfo &k : kernels)
        if (k.name == m[1])
          current = &k;
      continue;
    }
    if (!current)
      continue;
    if (spills.match(line, &m)) {
      int64_t stores = 0, loads = 0;
      m[1].getAsInteger(10, stores);
      m[2].getAsInteger(10, loads);
      current->spillBytes = stores + loads;
    } else if (registers.match(line, &m)) {
      int64_t count = 0;
      m[1].getAsInteger(10, count);
      current->registers = count;
    }
  }
  // One kernel may be launched several times: copy its statistics.
  for (KernelInfo &k : kernels)
    for (KernelInfo &other : kernels)
      if (k.name == other.name && !k.registers && other.registers) {
        k.registers = other.registers;
        k.spillBytes = other.spillBytes;
      }

  // The output file exists from the start (createTemporaryFile made it): a
  // "ptxas" that exits 0 without writing it leaves it empty.
  auto cubin = llvm::MemoryBuffer::getFile(cubinPath, /*IsText=*/false);
  if (!cubin || (*cubin)->getBufferSize() == 0)
    return emitError(loc) << "ptxas produced no cubin ('" << ptxas
                          << "' exited with status 0 but wrote nothing)";
  return (*cubin)->getBuffer().str();
}

/// Why the lowering produced no kernel, for "nothing to compile": the GEMMs
/// nvfp4-assign-precision kept in BF16 grouped by reason, or nvfp4 ops that
/// need no kernel.
static std::string explainNoKernels(bool hasNVFP4Ops,
                                    ArrayRef<PrecisionDecision> decisions,
                                    const CompileOptions &options) {
  if (hasNVFP4Ops)
    return "the nvfp4 operations need no kernel (what is left is computed "
           "at compile time: an empty tensor's amax is 0 and its RHT is "
           "itself)";
  if (decisions.empty())
    return "the input has no nvfp4 operations and no linalg GEMM to "
           "quantize";
  llvm::MapVector<StringRef, unsigned> reasons;
  for (const PrecisionDecision &decision : decisions)
    ++reasons[decision.precision == "nvfp4"
                  ? StringRef("NVFP4 but not rewritten by nvfp4-apply-recipe "
                              "(see its warning)")
                  : StringRef(decision.reason)];
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "the input has no nvfp4 operations and "
     << (decisions.size() == 1 ? "its GEMM stays"
                               : "all " + std::to_string(decisions.size()) +
                                     " GEMMs stay")
     << " in high precision: ";
  llvm::interleave(
      reasons, os,
      [&](const auto &entry) {
        os << entry.second << " x " << entry.first;
      },
      "; ");
  bool policy = llvm::any_of(decisions, [](const PrecisionDecision &d) {
    return StringRef(d.reason).contains("keep-first/keep-last");
  });
  if (policy && options.applyRecipe)
    os << " (--keep-first=N --keep-last=N choose how many blocks stay)";
  return text;
}

FailureOr<CompileResult>
mlir::nvfp4::compileModule(ModuleOp module, const CompileOptions &options) {
  Location loc = module.getLoc();
  const ::nvfp4::target::ChipInfo *chip =
      ::nvfp4::target::lookupChip(options.chip);
  if (!chip)
    return emitError(loc) << "unsupported chip '" << options.chip
                          << "' (supported: "
                          << ::nvfp4::target::supportedChipNames() << ")";
  // Fail early on a missing ptxas when a cubin is asked for.
  std::string ptxas = findPtxas(options.ptxasPath);
  if (options.emit == EmitKind::Cubin && ptxas.empty())
    return emitError(loc)
           << "--emit=cubin needs ptxas (CUDA 13): not found on PATH or in "
              "/usr/local/cuda/bin"
           << (options.ptxasPath.empty()
                   ? std::string()
                   : " nor at '" + options.ptxasPath + "'");

  // Without --mlir-timing, a disabled manager's scopes cost nothing.
  DefaultTimingManager noTiming;
  TimingScope rootTiming = noTiming.getRootScope();
  TimingScope &timing = options.timing ? *options.timing : rootTiming;

  auto containsNVFP4Ops = [&] {
    WalkResult found = module.walk([](Operation *op) {
      return isa_and_present<NVFP4Dialect>(op->getDialect())
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    return found.wasInterrupted();
  };
  // Before the graph passes: they may fold what needs no kernel away.
  bool hasNVFP4Ops = containsNVFP4Ops();

  CompileResult result;
  SmallVector<PrecisionDecision> decisions;
  if (options.applyRecipe) {
    // nvfp4-assign-precision through its library entry point, so that the
    // reasons of its choices are at hand for "nothing to compile".
    TimingScope assignTiming = timing.nest("nvfp4-assign-precision");
    PrecisionPolicy policy;
    policy.keepFirst = options.keepFirst;
    policy.keepLast = options.keepLast;
    if (std::optional<std::string> error =
            parseKindFormats(options.formats, policy.formats))
      return emitError(loc) << "--formats=" << *error;
    assignPrecision(module, policy, &decisions);
    assignTiming.stop();

    PassManager recipe(module.getContext());
    TimingScope recipeTiming = timing.nest("graph passes");
    recipe.enableTiming(recipeTiming);
    recipe.addPass(createNVFP4ApplyRecipe());
    recipe.addPass(createNVFP4FuseQuantization());
    if (failed(recipe.run(module)))
      return failure();
  }
  hasNVFP4Ops |= containsNVFP4Ops();
  if (options.buildPrecisionReport) {
    FailureOr<PrecisionReport> precision = nvfp4::buildPrecisionReport(module);
    if (failed(precision))
      return failure();
    result.precision = std::move(*precision);
  }

  PassManager pm(module.getContext());
  TimingScope loweringTiming = timing.nest("GPU lowering");
  pm.enableTiming(loweringTiming);
  buildGPUKernelPipeline(pm, chip->name, options.gemmSchedule,
                         options.quantizeSchedule, options.mxGemm);
  if (failed(pm.run(module)))
    return failure();
  loweringTiming.stop();

  result.chip = std::string(chip->name);
  result.ptxVersion = chip->ptxVersion;
  if (failed(collectLaunches(module, result, options.requireManifest)))
    return failure();
  if (options.emit == EmitKind::MLIR) {
    llvm::raw_string_ostream os(result.output);
    module.print(os);
    return result;
  }

  auto kernels = module.lookupSymbol<gpu::GPUModuleOp>("nvfp4_kernels");
  if (!kernels)
    return emitError(loc) << "nothing to compile for the GPU: "
                          << explainNoKernels(hasNVFP4Ops, decisions,
                                              options);
  std::string llvmText;
  FailureOr<std::string> ptx = emitPTX(
      kernels, *chip, options.emit == EmitKind::LLVM, llvmText, timing);
  if (failed(ptx))
    return failure();
  result.ptx = *ptx;
  if (options.emit == EmitKind::LLVM) {
    result.output = llvmText;
    return result;
  }

  bool assemble = options.emit == EmitKind::Cubin ||
                  (options.verifyWithPtxas && !ptxas.empty());
  if (assemble) {
    TimingScope ptxasTiming = timing.nest("ptxas");
    FailureOr<std::string> cubin =
        runPtxas(loc, ptxas, result.ptx, chip->name, result.kernels);
    ptxasTiming.stop();
    if (failed(cubin))
      return failure();
    result.assembledWithPtxas = true;
    result.ptxasPath = ptxas;
    if (options.emit == EmitKind::Cubin) {
      result.output = *cubin;
      return result;
    }
  }
  result.output = result.ptx;
  return result;
}

// One kernel or buffer is one small object; writeKernelReport streams them
// one at a time: a model of 10,000 blocks launches some 120,000 kernels, and
// the whole report as a json::Value tree took gigabytes.

static llvm::json::Value kernelToJSON(const KernelInfo &k) {
  llvm::json::Array params;
  for (const KernelParam &p : k.params) {
    llvm::json::Object param{{"type", p.type}};
    if (p.type == "ptr") {
      param["element_type"] = p.elementType;
      param["elements"] = p.elements;
      param["buffer"] = p.buffer;
    } else if (p.type == "tensormap") {
      param["element_type"] = p.elementType;
      param["buffer"] = p.buffer;
      param["dims"] = llvm::json::Array(p.dims);
      param["box"] = llvm::json::Array(p.box);
      param["swizzle"] = p.swizzle;
      param["l2_promotion"] = p.l2Promotion;
      param["oob_fill"] = p.oobFill;
    } else {
      if (p.argument >= 0)
        param["argument"] = p.argument;
      if (p.seedStream)
        param["seed_stream"] = static_cast<int64_t>(*p.seedStream);
      if (!p.constant.empty())
        param["value"] = p.constant;
    }
    params.push_back(std::move(param));
  }
  llvm::json::Object kernel{
      {"name", k.name},
      {"op", k.sourceOp},
      {"grid", llvm::json::Array{k.grid[0], k.grid[1], k.grid[2]}},
      {"block", llvm::json::Array{k.block[0], k.block[1], k.block[2]}},
      {"shared_memory_bytes", k.sharedMemoryBytes},
      {"params", std::move(params)}};
  if (k.registers)
    kernel["registers"] = *k.registers;
  if (k.spillBytes)
    kernel["spill_bytes"] = *k.spillBytes;
  return kernel;
}

static llvm::json::Value bufferToJSON(const BufferInfo &b) {
  llvm::json::Object buffer{{"element_type", b.elementType},
                            {"elements", b.elements},
                            {"zero_initialized", b.zeroInitialized}};
  if (b.argument >= 0)
    buffer["argument"] = b.argument;
  if (b.result >= 0)
    buffer["result"] = b.result;
  if (b.fillFromArgument >= 0)
    buffer["fill_from_argument"] = b.fillFromArgument;
  if (b.fillBits)
    buffer["fill_bits"] = static_cast<int64_t>(*b.fillBits);
  return buffer;
}

void mlir::nvfp4::writeKernelReport(llvm::raw_ostream &os,
                                    const CompileResult &result) {
  llvm::json::OStream json(os, /*IndentSize=*/2);
  // The keys in sorted order, as json::OStream prints an Object's.
  json.object([&] {
    json.attribute("assembled_with_ptxas", result.assembledWithPtxas);
    json.attributeArray("buffers", [&] {
      for (const BufferInfo &b : result.buffers)
        json.value(bufferToJSON(b));
    });
    json.attribute("chip", result.chip);
    json.attribute("function", result.function);
    if (!result.hostComputation.empty())
      json.attributeArray("host_computation", [&] {
        for (const HostComputation &entry : result.hostComputation)
          json.value(llvm::json::Object{{"op", entry.op},
                                        {"location", entry.location}});
      });
    json.attributeArray("kernels", [&] {
      for (const KernelInfo &k : result.kernels)
        json.value(kernelToJSON(k));
    });
    if (result.precision) {
      json.attributeBegin("precision");
      writeJSON(json, *result.precision);
      json.attributeEnd();
    }
    json.attribute("ptx_version", std::to_string(result.ptxVersion / 10) + "." +
                                      std::to_string(result.ptxVersion % 10));
  });
  os << "\n";
}

std::string mlir::nvfp4::renderKernelReport(const CompileResult &result) {
  std::string text;
  llvm::raw_string_ostream os(text);
  writeKernelReport(os, result);
  return text;
}
