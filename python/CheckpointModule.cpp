//===- CheckpointModule.cpp - nvfp4.checkpoint for Python -----------------===//
//
// Part of the nvfp4 project.
//
// `nvfp4._checkpoint`: the C++ safetensors reader/writer and the ModelOpt
// NVFP4 layout (nvfp4/Checkpoint/), so that Python and nvfp4-checkpoint read
// and write the same bytes. Its own extension: it loads LLVM's Support
// library, which `import nvfp4` should not. Every error becomes a ValueError
// carrying the tool's message.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Checkpoint/ModelOpt.h"
#include "nvfp4/Checkpoint/SafeTensors.h"

#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace nvfp4::checkpoint;

template <typename T> static T unwrap(llvm::Expected<T> Value) {
  if (!Value)
    throw py::value_error(llvm::toString(Value.takeError()));
  return std::move(*Value);
}

static void check(llvm::Error E) {
  if (E)
    throw py::value_error(llvm::toString(std::move(E)));
}

static py::array_t<uint8_t> bytesArray(std::vector<int64_t> Shape,
                                       const std::vector<uint8_t> &Bytes) {
  py::array_t<uint8_t> Array(
      std::vector<py::ssize_t>(Shape.begin(), Shape.end()));
  std::memcpy(Array.mutable_data(), Bytes.data(), Bytes.size());
  return Array;
}

static py::dict quantize(const std::string &Input, const std::string &OutDir,
                         std::vector<std::string> Exclude, int64_t KeepFirst,
                         int64_t KeepLast, const std::string &InputAmaxFile,
                         const std::string &Version) {
  if (KeepFirst < 0 || KeepLast < 0)
    throw py::value_error("keep_first and keep_last must be >= 0");
  CheckpointQuantizeOptions Options;
  Options.Policy.Exclude = std::move(Exclude);
  Options.Policy.KeepFirst = KeepFirst;
  Options.Policy.KeepLast = KeepLast;
  Options.InputAmaxFile = InputAmaxFile;
  Options.ProducerVersion = Version;
  QuantizeSummary Summary = unwrap(quantizeCheckpoint(Input, OutDir, Options));
  py::dict Result;
  Result["quantized"] = Summary.Quantized;
  Result["excluded"] = Summary.Excluded;
  return Result;
}

/// (codes [N, K], scales [N, K/16], decode scale, input scale or None).
static py::tuple loadLayerParts(const std::string &Dir,
                                const std::string &Name) {
  NVFP4Layer Layer = unwrap(loadLayer(Dir, Name));
  const auto &Q = Layer.Weight;
  py::object Input = py::none();
  if (Layer.InputScale)
    Input = py::float_(*Layer.InputScale);
  return py::make_tuple(bytesArray({Q.Rows, Q.Cols}, Q.Codes),
                        bytesArray({Q.Rows, Q.Cols / 16}, Q.Scales),
                        static_cast<double>(*Q.DecodeScale), Input);
}

static std::string importLayer(const std::string &Dir, const std::string &Name,
                               int64_t Tokens) {
  if (Tokens <= 0 || Tokens % 16 != 0)
    throw py::value_error("tokens must be a positive multiple of 16");
  return importLayerProgram(unwrap(loadLayer(Dir, Name)), Tokens);
}

static std::string inspect(const std::string &Path) {
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  check(inspectCheckpoint(Path, OS));
  return Text;
}

/// [(name, dtype, shape)] in data order, and the metadata.
static py::tuple listTensors(const std::string &Path) {
  SafeTensorsReader Reader = unwrap(SafeTensorsReader::open(Path));
  py::list Tensors;
  for (const TensorInfo &Info : Reader.tensors())
    Tensors.append(py::make_tuple(Info.Name, dtypeName(Info.Type).str(),
                                  py::tuple(py::cast(Info.Shape))));
  return py::make_tuple(Tensors, Reader.metadata());
}

/// The raw little-endian bytes of one tensor.
static py::bytes readTensor(const std::string &Path, const std::string &Name) {
  SafeTensorsReader Reader = unwrap(SafeTensorsReader::open(Path));
  const TensorInfo *Info = Reader.find(Name);
  if (!Info)
    throw py::value_error(Path + ": no tensor '" + Name + "'");
  std::vector<uint8_t> Bytes = unwrap(Reader.read(*Info));
  return py::bytes(reinterpret_cast<const char *>(Bytes.data()), Bytes.size());
}

PYBIND11_MODULE(_checkpoint, Module) {
  Module.doc() = "NVFP4 checkpoints (see nvfp4/checkpoint.py)";
  Module.def("quantize", &quantize, py::arg("input"), py::arg("out_dir"),
             py::arg("exclude"), py::arg("keep_first"), py::arg("keep_last"),
             py::arg("input_amax_file"), py::arg("version"));
  Module.def("load_layer", &loadLayerParts, py::arg("dir"), py::arg("name"));
  Module.def(
      "list_layers",
      [](const std::string &Dir) { return unwrap(listLayers(Dir)); },
      py::arg("dir"));
  Module.def("import_layer", &importLayer, py::arg("dir"), py::arg("name"),
             py::arg("tokens"));
  Module.def("inspect", &inspect, py::arg("path"));
  Module.def("list_tensors", &listTensors, py::arg("path"));
  Module.def("read_tensor", &readTensor, py::arg("path"), py::arg("name"));
}
