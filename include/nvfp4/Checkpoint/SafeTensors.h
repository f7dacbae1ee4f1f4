//===- SafeTensors.h - streaming safetensors reader and writer --*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The safetensors file format (Hugging Face): an 8-byte little-endian header
// length N, N bytes of JSON, then the tensors' bytes. The JSON object maps each
// tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets
// relative to the first byte after the header) and may hold "__metadata__", an
// object of strings.
//
// Files come from the internet, so the reader trusts nothing: it checks the
// header length against the file size, parses the JSON with llvm::json, checks
// every dtype, shape and offset, and requires the tensors to tile the data
// section exactly (no gap, no overlap, nothing after the last tensor), as the
// reference implementation does. Any violation is one llvm::Error naming the
// file and the tensor. Tensor bytes are read on demand with positioned reads:
// the file is never copied into memory as a whole.
//
// The writer lays the header out from declared dtypes and shapes first, then
// asks each tensor's producer for its bytes in order, so a tool can quantize
// and write one tensor at a time. It writes to a temporary file and renames it
// into place only when everything succeeded.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_CHECKPOINT_SAFETENSORS_H
#define NVFP4_CHECKPOINT_SAFETENSORS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nvfp4::checkpoint {

/// The element types of the safetensors format.
enum class DType {
  Bool,
  U8,
  I8,
  F8E5M2,
  F8E4M3,
  I16,
  U16,
  F16,
  BF16,
  I32,
  U32,
  F32,
  F64,
  I64,
  U64,
};

/// The dtype spelled `Name` in a header ("BF16", "F8_E4M3", ...).
std::optional<DType> parseDType(llvm::StringRef Name);
/// The header spelling of `Type`.
llvm::StringRef dtypeName(DType Type);
/// Bytes per element.
unsigned dtypeSize(DType Type);

/// The largest header the reader accepts (the reference implementation's
/// limit): a bigger length field is a corrupt or hostile file.
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;

/// One tensor of a safetensors file.
struct TensorInfo {
  std::string Name;
  DType Type = DType::U8;
  std::vector<int64_t> Shape;
  /// Byte range in the data section (relative to its first byte).
  uint64_t Begin = 0, End = 0;

  int64_t numElements() const;
  uint64_t byteSize() const { return End - Begin; }
};

/// A safetensors file opened for reading; tensors are read on demand.
class SafeTensorsReader {
public:
  /// Opens and validates `Path` (header only; no tensor bytes are read).
  static llvm::Expected<SafeTensorsReader> open(llvm::StringRef Path);

  SafeTensorsReader(SafeTensorsReader &&Other);
  SafeTensorsReader &operator=(SafeTensorsReader &&Other) = delete;
  SafeTensorsReader(const SafeTensorsReader &) = delete;
  ~SafeTensorsReader();

  /// The tensors in the order of their data (ascending offsets).
  llvm::ArrayRef<TensorInfo> tensors() const { return Tensors; }
  /// The tensor called `Name`, or null.
  const TensorInfo *find(llvm::StringRef Name) const;
  /// The "__metadata__" strings.
  const std::map<std::string, std::string> &metadata() const {
    return Metadata;
  }
  llvm::StringRef path() const { return Path; }

  /// Reads the bytes of `Tensor` (one of tensors()) into `Out`, whose size
  /// must be Tensor.byteSize().
  llvm::Error read(const TensorInfo &Tensor,
                   llvm::MutableArrayRef<uint8_t> Out) const;
  /// Reads the bytes of `Tensor` into a new buffer.
  llvm::Expected<std::vector<uint8_t>> read(const TensorInfo &Tensor) const;

private:
  SafeTensorsReader() = default;

  std::string Path;
  llvm::sys::fs::file_t File = llvm::sys::fs::kInvalidFile;
  uint64_t DataStart = 0;
  std::vector<TensorInfo> Tensors;
  std::map<std::string, std::string> Metadata;
};

/// Writes a safetensors file tensor by tensor.
class SafeTensorsWriter {
public:
  /// Produces the bytes of one tensor when the writer reaches it.
  using Producer = std::function<llvm::Expected<std::vector<uint8_t>>()>;

  /// Declares a tensor; `Produce` is called once, in declaration order, and
  /// must return exactly numElements * dtypeSize bytes.
  llvm::Error add(llvm::StringRef Name, DType Type,
                  llvm::ArrayRef<int64_t> Shape, Producer Produce);
  /// Declares a tensor whose bytes are already at hand.
  llvm::Error add(llvm::StringRef Name, DType Type,
                  llvm::ArrayRef<int64_t> Shape, std::vector<uint8_t> Bytes);
  void setMetadata(llvm::StringRef Key, llvm::StringRef Value) {
    Metadata[Key.str()] = Value.str();
  }

  /// Writes the file (to a temporary, renamed to `Path` on success).
  llvm::Error write(llvm::StringRef Path);

private:
  struct Pending {
    TensorInfo Info;
    Producer Produce;
  };
  std::vector<Pending> Tensors;
  std::map<std::string, std::string> Metadata;
};

} // namespace nvfp4::checkpoint

#endif // NVFP4_CHECKPOINT_SAFETENSORS_H
