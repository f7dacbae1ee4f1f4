//===- SafeTensors.cpp - streaming safetensors reader and writer ---------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Checkpoint/SafeTensors.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <limits>

using namespace llvm;
using namespace nvfp4::checkpoint;

namespace {
struct DTypeEntry {
  DType Type;
  StringLiteral Name;
  unsigned Size;
};
} // namespace

static constexpr DTypeEntry kDTypes[] = {
    {DType::Bool, "BOOL", 1},      {DType::U8, "U8", 1},
    {DType::I8, "I8", 1},          {DType::F8E5M2, "F8_E5M2", 1},
    {DType::F8E4M3, "F8_E4M3", 1}, {DType::I16, "I16", 2},
    {DType::U16, "U16", 2},        {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2},      {DType::I32, "I32", 4},
    {DType::U32, "U32", 4},        {DType::F32, "F32", 4},
    {DType::F64, "F64", 8},        {DType::I64, "I64", 8},
    {DType::U64, "U64", 8},
};

std::optional<DType> nvfp4::checkpoint::parseDType(StringRef Name) {
  for (const DTypeEntry &Entry : kDTypes)
    if (Entry.Name == Name)
      return Entry.Type;
  return std::nullopt;
}

StringRef nvfp4::checkpoint::dtypeName(DType Type) {
  return kDTypes[static_cast<unsigned>(Type)].Name;
}

unsigned nvfp4::checkpoint::dtypeSize(DType Type) {
  return kDTypes[static_cast<unsigned>(Type)].Size;
}

int64_t TensorInfo::numElements() const {
  int64_t Count = 1;
  for (int64_t Dim : Shape)
    Count *= Dim;
  return Count;
}

static Error fail(const Twine &Message) {
  return createStringError(inconvertibleErrorCode(), Message);
}

/// The element count of `Shape` times `ElementSize`, or nullopt when it does
/// not fit in 62 bits (no real file is that large; the bound keeps every sum
/// of offsets below overflow).
static std::optional<uint64_t> byteCount(ArrayRef<int64_t> Shape,
                                         unsigned ElementSize) {
  constexpr uint64_t Limit = uint64_t(1) << 62;
  uint64_t Count = ElementSize;
  for (int64_t Dim : Shape) {
    if (Dim < 0)
      return std::nullopt;
    if (Dim != 0 && Count > Limit / static_cast<uint64_t>(Dim))
      return std::nullopt;
    Count *= static_cast<uint64_t>(Dim);
  }
  return Count;
}

//===----------------------------------------------------------------------===//
// Reader
//===----------------------------------------------------------------------===//

SafeTensorsReader::SafeTensorsReader(SafeTensorsReader &&Other)
    : Path(std::move(Other.Path)), File(Other.File), DataStart(Other.DataStart),
      Tensors(std::move(Other.Tensors)), Metadata(std::move(Other.Metadata)) {
  Other.File = sys::fs::kInvalidFile;
}

SafeTensorsReader::~SafeTensorsReader() {
  if (File != sys::fs::kInvalidFile)
    sys::fs::closeFile(File);
}

/// Reads exactly `Out.size()` bytes at `Offset`.
static Error readExactly(sys::fs::file_t File, MutableArrayRef<char> Out,
                         uint64_t Offset) {
  size_t Done = 0;
  while (Done < Out.size()) {
    Expected<size_t> Read =
        sys::fs::readNativeFileSlice(File, Out.drop_front(Done), Offset + Done);
    if (!Read)
      return Read.takeError();
    if (*Read == 0)
      return fail("unexpected end of file");
    Done += *Read;
  }
  return Error::success();
}

/// Parses one tensor entry of the header.
static Error parseTensorEntry(StringRef Name, const json::Value &Entry,
                              TensorInfo &Info) {
  const json::Object *Object = Entry.getAsObject();
  if (!Object)
    return fail("tensor '" + Name + "': the entry must be a JSON object");
  for (const auto &Field : *Object)
    if (Field.first != "dtype" && Field.first != "shape" &&
        Field.first != "data_offsets")
      return fail("tensor '" + Name + "': unknown field '" +
                  StringRef(Field.first) + "'");
  Info.Name = Name.str();

  std::optional<StringRef> TypeName = Object->getString("dtype");
  if (!TypeName)
    return fail("tensor '" + Name + "': missing string field 'dtype'");
  std::optional<DType> Type = parseDType(*TypeName);
  if (!Type)
    return fail("tensor '" + Name + "': unknown dtype '" + *TypeName + "'");
  Info.Type = *Type;

  const json::Array *Shape = Object->getArray("shape");
  if (!Shape)
    return fail("tensor '" + Name + "': missing array field 'shape'");
  for (const json::Value &Dim : *Shape) {
    std::optional<int64_t> Value = Dim.getAsInteger();
    if (!Value || *Value < 0)
      return fail("tensor '" + Name +
                  "': shape entries must be non-negative integers");
    Info.Shape.push_back(*Value);
  }

  const json::Array *Offsets = Object->getArray("data_offsets");
  if (!Offsets || Offsets->size() != 2)
    return fail("tensor '" + Name +
                "': 'data_offsets' must be an array [begin, end]");
  std::optional<uint64_t> Begin = (*Offsets)[0].getAsUINT64();
  std::optional<uint64_t> End = (*Offsets)[1].getAsUINT64();
  if (!Begin || !End)
    return fail("tensor '" + Name +
                "': data offsets must be non-negative integers");
  if (*Begin > *End)
    return fail("tensor '" + Name + "': data offsets [" + Twine(*Begin) + ", " +
                Twine(*End) + "] end before they begin");
  Info.Begin = *Begin;
  Info.End = *End;

  std::optional<uint64_t> Bytes = byteCount(Info.Shape, dtypeSize(Info.Type));
  if (!Bytes)
    return fail("tensor '" + Name + "': the shape is too large");
  if (*Bytes != Info.byteSize())
    return fail("tensor '" + Name + "': " + dtypeName(Info.Type) +
                " shape needs " + Twine(*Bytes) + " bytes but its data " +
                "offsets span " + Twine(Info.byteSize()));
  return Error::success();
}

Expected<SafeTensorsReader> SafeTensorsReader::open(StringRef Path) {
  auto withPath = [&](Error E) {
    return fail(Path + ": " + toString(std::move(E)));
  };
  SafeTensorsReader Reader;
  Reader.Path = Path.str();
  Expected<sys::fs::file_t> File = sys::fs::openNativeFileForRead(Path);
  if (!File)
    return withPath(File.takeError());
  Reader.File = *File;

  sys::fs::file_status Status;
  if (std::error_code EC = sys::fs::status(Reader.File, Status))
    return withPath(errorCodeToError(EC));
  if (Status.type() != sys::fs::file_type::regular_file)
    return withPath(fail("not a regular file"));
  uint64_t FileSize = Status.getSize();
  if (FileSize < 8)
    return withPath(fail("file of " + Twine(FileSize) +
                         " bytes is too short for the 8-byte header length"));

  char LengthBytes[8];
  if (Error E = readExactly(Reader.File, LengthBytes, 0))
    return withPath(std::move(E));
  uint64_t HeaderLength =
      support::endian::read64le(reinterpret_cast<const uint8_t *>(LengthBytes));
  if (HeaderLength > kMaxHeaderBytes)
    return withPath(fail("header length " + Twine(HeaderLength) +
                         " exceeds the limit of " + Twine(kMaxHeaderBytes) +
                         " bytes"));
  if (HeaderLength > FileSize - 8)
    return withPath(fail("header length " + Twine(HeaderLength) +
                         " exceeds the " + Twine(FileSize - 8) +
                         " bytes after the length field (truncated file?)"));
  std::string Header(HeaderLength, '\0');
  if (Error E = readExactly(Reader.File, Header, 8))
    return withPath(std::move(E));
  Reader.DataStart = 8 + HeaderLength;

  Expected<json::Value> Parsed = json::parse(Header);
  if (!Parsed)
    return withPath(
        fail("header is not valid JSON: " + toString(Parsed.takeError())));
  const json::Object *Root = Parsed->getAsObject();
  if (!Root)
    return withPath(fail("header must be a JSON object"));

  for (const auto &[Key, Value] : *Root) {
    if (Key == "__metadata__") {
      const json::Object *Meta = Value.getAsObject();
      if (!Meta)
        return withPath(fail("'__metadata__' must be an object of strings"));
      for (const auto &[MetaKey, MetaValue] : *Meta) {
        std::optional<StringRef> Text = MetaValue.getAsString();
        if (!Text)
          return withPath(fail("'__metadata__' entry '" + StringRef(MetaKey) +
                               "' is not a string"));
        Reader.Metadata[MetaKey.str()] = Text->str();
      }
      continue;
    }
    if (StringRef(Key).empty())
      return withPath(fail("a tensor name is empty"));
    TensorInfo Info;
    if (Error E = parseTensorEntry(Key, Value, Info))
      return withPath(std::move(E));
    Reader.Tensors.push_back(std::move(Info));
  }

  // The tensors must tile the data section: sorted by offset, each begins
  // where the previous one ended, and the last ends at the end of the file.
  llvm::stable_sort(Reader.Tensors, [](const TensorInfo &A,
                                       const TensorInfo &B) {
    return std::tie(A.Begin, A.End, A.Name) < std::tie(B.Begin, B.End, B.Name);
  });
  uint64_t Covered = 0;
  for (const TensorInfo &Info : Reader.Tensors) {
    if (Info.Begin != Covered)
      return withPath(
          fail("tensor '" + Info.Name + "' begins at data byte " +
               Twine(Info.Begin) + ", expected " + Twine(Covered) +
               (Info.Begin < Covered ? " (it overlaps the tensor before it)"
                                     : " (a gap before it)")));
    Covered = Info.End;
  }
  uint64_t DataSize = FileSize - Reader.DataStart;
  if (Covered != DataSize)
    return withPath(
        fail("the tensors cover " + Twine(Covered) +
             " data bytes but the file has " + Twine(DataSize) +
             (Covered > DataSize ? " (truncated file)" : " (trailing bytes)")));
  return std::move(Reader);
}

const TensorInfo *SafeTensorsReader::find(StringRef Name) const {
  for (const TensorInfo &Info : Tensors)
    if (Info.Name == Name)
      return &Info;
  return nullptr;
}

Error SafeTensorsReader::read(const TensorInfo &Tensor,
                              MutableArrayRef<uint8_t> Out) const {
  if (Out.size() != Tensor.byteSize())
    return fail(Path + ": tensor '" + Tensor.Name + "' has " +
                Twine(Tensor.byteSize()) + " bytes, not " + Twine(Out.size()));
  MutableArrayRef<char> Chars(reinterpret_cast<char *>(Out.data()), Out.size());
  if (Error E = readExactly(File, Chars, DataStart + Tensor.Begin))
    return fail(Path + ": reading tensor '" + Tensor.Name +
                "': " + toString(std::move(E)));
  return Error::success();
}

Expected<std::vector<uint8_t>>
SafeTensorsReader::read(const TensorInfo &Tensor) const {
  std::vector<uint8_t> Bytes(Tensor.byteSize());
  if (Error E = read(Tensor, Bytes))
    return std::move(E);
  return Bytes;
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

Error SafeTensorsWriter::add(StringRef Name, DType Type,
                             ArrayRef<int64_t> Shape, Producer Produce) {
  if (Name.empty() || Name == "__metadata__")
    return fail("invalid tensor name '" + Name + "'");
  if (llvm::any_of(Tensors,
                   [&](const Pending &P) { return P.Info.Name == Name; }))
    return fail("tensor '" + Name + "' is declared twice");
  std::optional<uint64_t> Bytes = byteCount(Shape, dtypeSize(Type));
  if (!Bytes)
    return fail("tensor '" + Name + "': the shape is too large");
  Pending P;
  P.Info.Name = Name.str();
  P.Info.Type = Type;
  P.Info.Shape.assign(Shape.begin(), Shape.end());
  P.Info.Begin = Tensors.empty() ? 0 : Tensors.back().Info.End;
  P.Info.End = P.Info.Begin + *Bytes;
  P.Produce = std::move(Produce);
  Tensors.push_back(std::move(P));
  return Error::success();
}

Error SafeTensorsWriter::add(StringRef Name, DType Type,
                             ArrayRef<int64_t> Shape,
                             std::vector<uint8_t> Bytes) {
  auto Shared = std::make_shared<std::vector<uint8_t>>(std::move(Bytes));
  return add(Name, Type, Shape, [Shared]() -> Expected<std::vector<uint8_t>> {
    return std::move(*Shared);
  });
}

Error SafeTensorsWriter::write(StringRef Path) {
  std::string Header;
  {
    raw_string_ostream OS(Header);
    json::OStream J(OS);
    J.object([&] {
      if (!Metadata.empty())
        J.attributeObject("__metadata__", [&] {
          for (const auto &[Key, Value] : Metadata)
            J.attribute(Key, Value);
        });
      for (const Pending &P : Tensors)
        J.attributeObject(P.Info.Name, [&] {
          J.attribute("dtype", dtypeName(P.Info.Type));
          J.attributeArray("shape", [&] {
            for (int64_t Dim : P.Info.Shape)
              J.value(Dim);
          });
          J.attributeArray("data_offsets", [&] {
            J.value(static_cast<int64_t>(P.Info.Begin));
            J.value(static_cast<int64_t>(P.Info.End));
          });
        });
    });
  }
  // Pad with spaces so that the data section starts 8-byte aligned.
  Header.append((8 - Header.size() % 8) % 8, ' ');

  int FD;
  SmallString<128> TempPath;
  if (std::error_code EC =
          sys::fs::createUniqueFile(Path + ".tmp-%%%%%%", FD, TempPath))
    return fail(Path + ": cannot create a temporary file: " + EC.message());
  auto discard = [&](Error E) {
    sys::fs::remove(TempPath);
    return fail(Path + ": " + toString(std::move(E)));
  };
  {
    raw_fd_ostream OS(FD, /*shouldClose=*/true);
    char Length[8];
    support::endian::write64le(Length, Header.size());
    OS.write(Length, 8);
    OS << Header;
    for (Pending &P : Tensors) {
      Expected<std::vector<uint8_t>> Bytes = P.Produce();
      if (!Bytes) {
        OS.close();
        return discard(Bytes.takeError());
      }
      if (Bytes->size() != P.Info.byteSize()) {
        OS.close();
        return discard(fail("tensor '" + P.Info.Name + "' produced " +
                            Twine(Bytes->size()) + " bytes, declared " +
                            Twine(P.Info.byteSize())));
      }
      OS.write(reinterpret_cast<const char *>(Bytes->data()), Bytes->size());
      P.Produce = nullptr;
    }
    OS.close();
    if (OS.has_error()) {
      std::error_code EC = OS.error();
      OS.clear_error();
      return discard(errorCodeToError(EC));
    }
  }
  if (std::error_code EC = sys::fs::rename(TempPath, Path))
    return discard(errorCodeToError(EC));
  return Error::success();
}
