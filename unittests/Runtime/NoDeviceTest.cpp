//===- NoDeviceTest.cpp - Runtime errors without a CUDA driver ------------===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The driver is loaded once per process; this binary points
// $NVFP4_CUDA_DRIVER at a library that does not exist before anything loads
// it, so these tests behave the same on machines with and without a GPU.
//
//===----------------------------------------------------------------------===//

#include "nvfp4-c/Runtime.h"
#include "nvfp4/Runtime/Runtime.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <string>

using namespace nvfp4::runtime;

namespace {

const int kNoDriver =
    setenv("NVFP4_CUDA_DRIVER", "/nonexistent/libcuda-for-nvfp4-tests.so", 1);

std::string input(const char *name) {
  return std::string(NVFP4_RUNTIME_TEST_INPUTS) + "/" + name;
}

bool contains(const std::string &text, const std::string &fragment) {
  return text.find(fragment) != std::string::npos;
}

TEST(RuntimeNoDevice, DeviceOpenFails) {
  ASSERT_EQ(kNoDriver, 0);
  Expected<std::shared_ptr<Device>> device = Device::open(0);
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), ErrorCode::NoDevice);
  EXPECT_TRUE(contains(device.message(),
                       "no CUDA device: the CUDA driver library could not be "
                       "loaded (/nonexistent/libcuda-for-nvfp4-tests.so"))
      << device.message();
  // The failure is remembered, not retried.
  Expected<std::shared_ptr<Device>> again = Device::open(0);
  EXPECT_EQ(again.message(), device.message());
}

TEST(RuntimeNoDevice, BundleLoadChecksFilesFirst) {
  // File problems are reported before the (missing) driver.
  Expected<std::shared_ptr<Bundle>> missing =
      Bundle::load(input("kernel.ptx"), input("missing.json"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::Io);

  Expected<std::shared_ptr<Bundle>> notImage =
      Bundle::load(input("quantize_sr.json"), input("quantize_sr.json"));
  ASSERT_FALSE(notImage.ok());
  EXPECT_EQ(notImage.status().code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(contains(notImage.message(), "is not a cubin, fatbin or PTX"))
      << notImage.message();

  Expected<std::shared_ptr<Bundle>> noDevice =
      Bundle::load(input("kernel.ptx"), input("quantize_sr.json"));
  ASSERT_FALSE(noDevice.ok());
  EXPECT_EQ(noDevice.status().code(), ErrorCode::NoDevice);
}

TEST(RuntimeCAPI, Errors) {
  EXPECT_EQ(nvfp4rtGetApiVersion(), NVFP4RT_API_VERSION);
  EXPECT_STREQ(nvfp4rtStatusName(NVFP4RT_ERROR_NO_DEVICE), "no CUDA device");
  EXPECT_STREQ(nvfp4rtStatusName(99), "unknown status");

  nvfp4rtBundle bundle = reinterpret_cast<nvfp4rtBundle>(1);
  EXPECT_EQ(nvfp4rtBundleLoad(input("kernel.ptx").c_str(),
                              input("missing.json").c_str(), 0, &bundle),
            NVFP4RT_ERROR_IO);
  EXPECT_EQ(bundle, nullptr);
  EXPECT_TRUE(contains(nvfp4rtGetLastError(), "cannot read manifest"));

  EXPECT_EQ(nvfp4rtBundleLoad(input("kernel.ptx").c_str(),
                              input("quantize_sr.json").c_str(), 0, &bundle),
            NVFP4RT_ERROR_NO_DEVICE);
  EXPECT_TRUE(contains(nvfp4rtGetLastError(), "no CUDA device"));

  const char json[] = "{\"buffers\": 3}";
  const char ptx[] = ".version 8.0\n.target sm_90a\n";
  EXPECT_EQ(nvfp4rtBundleLoadFromMemory(ptx, sizeof(ptx), json,
                                        sizeof(json) - 1, 0, &bundle),
            NVFP4RT_ERROR_INVALID_MANIFEST);
  EXPECT_TRUE(contains(nvfp4rtGetLastError(), "missing \"buffers\" array"));

  EXPECT_EQ(nvfp4rtBundleLoad(nullptr, "x", 0, &bundle),
            NVFP4RT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(nvfp4rtGetLastError(), "nvfp4rtBundleLoad: imagePath is NULL");
  EXPECT_EQ(nvfp4rtSessionRun(nullptr, 1, 0, nullptr),
            NVFP4RT_ERROR_INVALID_ARGUMENT);
  nvfp4rtBundleDestroy(nullptr);
  nvfp4rtSessionDestroy(nullptr);

  const char *text = nullptr;
  ASSERT_EQ(nvfp4rtManifestDescribe(input("quantize_sr.json").c_str(), &text),
            NVFP4RT_SUCCESS);
  EXPECT_TRUE(contains(text, "argument 1: scalar i64")) << text;
}

} // namespace
