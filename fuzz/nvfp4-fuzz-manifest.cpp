//===- nvfp4-fuzz-manifest.cpp - libFuzzer target: the kernel manifest ----===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to what nvfp4-run --describe, the C API and
// nvfp4_runtime.describe_manifest do with a manifest file: parse and check it
// (nvfp4::runtime::Manifest::parse) and, when it is valid, describe it. A
// manifest is untrusted input: it may be rejected with a message, never
// crash, overflow the stack (deeply nested JSON) or trip a sanitizer. No
// CUDA is needed. Seeds: the manifests nvfp4-compile writes for
// fuzz/seeds/*.mlir and fuzz/seeds-manifest/ (scripts/fuzz.sh).
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Runtime/Runtime.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  auto manifest = nvfp4::runtime::Manifest::parse(text, "fuzz.json");
  if (manifest.ok())
    (void)manifest->describe();
  return 0;
}
