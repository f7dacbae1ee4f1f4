//===- NVFP4Bytecode.cpp - the dialect's bytecode version -----------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Types and attributes use the bytecode's generic encoding (their textual
// form), ops the generic operation encoding; what is ours is the dialect
// version, written into every file so that a later build can tell which
// encoding wrote it, and so that a file from a newer build is refused with
// a message instead of misread. docs/Embedding.md, section 7, states what
// is promised between releases.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Dialect/NVFP4/IR/NVFP4Bytecode.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"

#include "mlir/Bytecode/BytecodeImplementation.h"

using namespace mlir;
using namespace mlir::nvfp4;

namespace {
struct NVFP4DialectVersion : public DialectVersion {
  explicit NVFP4DialectVersion(uint64_t value) : value(value) {}
  uint64_t value;
};

struct NVFP4BytecodeInterface : public BytecodeDialectInterface {
  explicit NVFP4BytecodeInterface(Dialect *dialect)
      : BytecodeDialectInterface(dialect) {}

  void writeVersion(DialectBytecodeWriter &writer) const override {
    writer.writeVarInt(kNVFP4BytecodeVersion);
  }

  std::unique_ptr<DialectVersion>
  readVersion(DialectBytecodeReader &reader) const override {
    uint64_t version;
    if (failed(reader.readVarInt(version)))
      return nullptr;
    if (version > kNVFP4BytecodeVersion) {
      reader.emitError() << "nvfp4 bytecode version " << version
                         << " was written by a newer nvfp4; this build reads "
                            "versions up to "
                         << kNVFP4BytecodeVersion;
      return nullptr;
    }
    return std::make_unique<NVFP4DialectVersion>(version);
  }

  LogicalResult upgradeFromVersion(Operation *topLevelOp,
                                   const DialectVersion &version) const override {
    // Version 1 is the first; files of 0.1.0, written before the dialect had
    // a version, carry none and are read as they are (same encoding). A
    // later version that changes an op's form upgrades older IR here.
    return success();
  }
};
} // namespace

void mlir::nvfp4::detail::addBytecodeInterface(NVFP4Dialect *dialect) {
  dialect->addInterfaces<NVFP4BytecodeInterface>();
}
