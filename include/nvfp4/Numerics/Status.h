//===- Status.h - Error reporting for the numerics library ------*- C++ -*-===//
//
// Part of the nvfp4 project.
//
//===----------------------------------------------------------------------===//
//
// The numerics library is called with user data (from the Python module and
// from the MLIR constant folder), so malformed shapes are reported as values,
// never as asserts or aborts. The library is free of LLVM, so it carries its
// own minimal Status / Expected pair instead of llvm::Error.
//
//===----------------------------------------------------------------------===//

#ifndef NVFP4_NUMERICS_STATUS_H
#define NVFP4_NUMERICS_STATUS_H

#include <optional>
#include <string>
#include <utility>

namespace nvfp4::numerics {

/// The outcome of an operation that produces no value: success, or failure
/// with a human-readable message meant to be shown to the user as is.
class Status {
public:
  /// Returns a successful status.
  static Status success() { return Status(); }

  /// Returns a failed status carrying `Message`.
  static Status error(std::string Message) {
    Status Result;
    Result.Failed = true;
    Result.Message = std::move(Message);
    return Result;
  }

  /// True when the operation succeeded.
  bool ok() const { return !Failed; }

  /// The error message; empty on success.
  const std::string &message() const { return Message; }

private:
  Status() = default;

  bool Failed = false;
  std::string Message;
};

/// Either a value of type `T` or a failed Status. Check `ok()` before
/// dereferencing; dereferencing a failed Expected is a programming error.
template <typename T> class Expected {
public:
  /// Wraps a successful result.
  Expected(T Value) : Value(std::move(Value)), Err(Status::success()) {}

  /// Wraps a failure. A successful `Error` is turned into a failure as well,
  /// so that an Expected without a value can never claim success.
  Expected(Status Error) : Err(std::move(Error)) {
    if (Err.ok())
      Err = Status::error("internal error: Expected built without a value");
  }

  /// True when a value is present.
  bool ok() const { return Value.has_value(); }

  /// The status; `message()` holds the error text on failure.
  const Status &status() const { return Err; }
  const std::string &message() const { return Err.message(); }

  T &operator*() { return *Value; }
  const T &operator*() const { return *Value; }
  T *operator->() { return &*Value; }
  const T *operator->() const { return &*Value; }

  /// Moves the value out (only valid when `ok()`).
  T take() { return std::move(*Value); }

private:
  std::optional<T> Value;
  Status Err;
};

} // namespace nvfp4::numerics

#endif // NVFP4_NUMERICS_STATUS_H
