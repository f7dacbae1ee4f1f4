//===- NVFP4Ops.h - nvfp4 operations ----------------------------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_DIALECT_NVFP4_IR_NVFP4OPS_H
#define NVFP4_DIALECT_NVFP4_IR_NVFP4OPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Dialect.h"

#define GET_OP_CLASSES
#include "nvfp4/Dialect/NVFP4/IR/NVFP4Ops.h.inc"

#endif // NVFP4_DIALECT_NVFP4_IR_NVFP4OPS_H
