//===- nvfp4-run.cpp - Run a kernel bundle from the command line ----------===//
//
// Part of the nvfp4 project.
//
//   nvfp4-run K.cubin --manifest=K.json [--input N=FILE.bin ...]
//             [--scalar N=VALUE ...] [--output N=FILE.bin ...]
//             [--repeat R] [--warmup W] [--time] [--time-kernels]
//             [--device D]
//   nvfp4-run --manifest=K.json --describe
//
// Runs the host function nvfp4-compile compiled (K.cubin or K.ptx plus the
// --report manifest): argument N is a raw-bytes file (--input) or a number
// (--scalar), result N is written as raw bytes (--output). Every mistake --
// a missing file, a malformed manifest, an input of the wrong size, no CUDA
// driver or device, a CUDA error -- is one line "nvfp4-run: error: ..." on
// stderr and exit status 1. Everything that can be checked without a GPU is
// checked before the driver is touched.
//
//===----------------------------------------------------------------------===//

#include "nvfp4/Runtime/Runtime.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

using namespace nvfp4::runtime;

namespace {

const char *const kUsage =
    "usage: nvfp4-run KERNELS.cubin|.ptx --manifest=REPORT.json\n"
    "                 [--input N=FILE.bin]... [--scalar N=VALUE]...\n"
    "                 [--output N=FILE.bin]... [--repeat R] [--warmup W]\n"
    "                 [--time] [--time-kernels] [--device D]\n"
    "       nvfp4-run --manifest=REPORT.json --describe\n"
    "\n"
    "Runs the kernels nvfp4-compile wrote (--emit=cubin|ptx, with the\n"
    "--report manifest) as the compiled host function would.\n"
    "\n"
    "  --manifest=FILE     the JSON report of nvfp4-compile --report\n"
    "  --input N=FILE      host-function argument N (an array): raw bytes,\n"
    "                      exactly the size the manifest gives\n"
    "  --scalar N=VALUE    host-function argument N (a scalar): decimal,\n"
    "                      0x hex, or a floating-point number\n"
    "  --output N=FILE     write host-function result N as raw bytes\n"
    "  --repeat R          run the launch sequence R times (default 1)\n"
    "  --warmup W          untimed runs first (default 0)\n"
    "  --time              print the time per launch sequence (CUDA events)\n"
    "  --time-kernels      also time each launch (an event between launches)\n"
    "                      and print one line per launch and per kernel\n"
    "  --device D          CUDA device ordinal (default 0)\n"
    "  --describe          print the manifest's arguments, results and\n"
    "                      launches, and exit (no GPU needed)\n"
    "\n"
    "Buffers that do not hold arguments start as 0xAB bytes unless the\n"
    "manifest says they start at zero, and are re-initialized before every\n"
    "repetition. $NVFP4_CUDA_DRIVER overrides the driver library\n"
    "(default libcuda.so.1).\n";

int fail(const std::string &message) {
  std::fprintf(stderr, "nvfp4-run: error: %s\n", message.c_str());
  return 1;
}

/// Parses a non-negative decimal index.
bool parseIndex(const std::string &text, int64_t &out) {
  if (text.empty() || text.size() > 12)
    return false;
  out = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

bool parseCount(const std::string &text, int minimum, int &out) {
  int64_t value;
  if (!parseIndex(text, value) || value < minimum || value > 1000000000)
    return false;
  out = static_cast<int>(value);
  return true;
}

struct Assignment {
  std::string option; ///< "--input" etc., for messages
  int64_t index = 0;
  std::string value;
  std::string spelled() const {
    return option + " " + std::to_string(index) + "=" + value;
  }
};

struct Options {
  std::string image, manifest;
  std::vector<Assignment> inputs, scalars, outputs;
  int repeat = 1, warmup = 0, device = 0;
  bool time = false, timeKernels = false, describe = false, help = false;
};

/// Parses the command line; returns an error message or "".
std::string parseOptions(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      o.help = true;
      continue;
    }
    if (arg == "--time") {
      o.time = true;
      continue;
    }
    if (arg == "--time-kernels") {
      o.time = o.timeKernels = true;
      continue;
    }
    if (arg == "--describe") {
      o.describe = true;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      if (!o.image.empty())
        return "more than one kernel image given ('" + o.image + "' and '" +
               arg + "')";
      o.image = arg;
      continue;
    }
    // --name=value or --name value.
    std::string name = arg, value;
    bool hasValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasValue = true;
    }
    static const char *const withValue[] = {
        "--manifest", "--input",  "--scalar", "--output",
        "--repeat",   "--warmup", "--device"};
    bool known = false;
    for (const char *n : withValue)
      known |= name == n;
    if (!known)
      return "unknown option '" + arg + "' (see --help)";
    if (!hasValue) {
      if (i + 1 >= argc)
        return name + " needs a value";
      value = argv[++i];
    }
    if (name == "--manifest") {
      o.manifest = value;
    } else if (name == "--repeat") {
      if (!parseCount(value, 1, o.repeat))
        return "--repeat expects a positive count, got '" + value + "'";
    } else if (name == "--warmup") {
      if (!parseCount(value, 0, o.warmup))
        return "--warmup expects a count, got '" + value + "'";
    } else if (name == "--device") {
      if (!parseCount(value, 0, o.device))
        return "--device expects a device ordinal, got '" + value + "'";
    } else {
      Assignment a;
      a.option = name;
      size_t eq = value.find('=');
      const char *form = name == "--scalar" ? "N=VALUE" : "N=FILE";
      if (eq == std::string::npos || !parseIndex(value.substr(0, eq), a.index))
        return name + " expects " + form + " (N the argument or result " +
               "number), got '" + value + "'";
      a.value = value.substr(eq + 1);
      if (a.value.empty())
        return name + " expects " + form + ", got '" + value + "'";
      std::vector<Assignment> &list = name == "--input"    ? o.inputs
                                      : name == "--scalar" ? o.scalars
                                                           : o.outputs;
      for (const Assignment &other : list)
        if (other.index == a.index)
          return name + " " + std::to_string(a.index) + " given twice";
      list.push_back(a);
    }
  }
  return "";
}

/// Reads a whole file, checking its size against `expected` first.
std::string readInput(const std::string &path, size_t expected,
                      const std::string &what, std::string &data) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return "cannot read '" + path + "': " + std::strerror(errno);
  if (!S_ISREG(st.st_mode))
    return "cannot read '" + path + "': not a regular file";
  if (static_cast<uint64_t>(st.st_size) != expected)
    return "'" + path + "' has " + std::to_string(st.st_size) + " bytes, but " +
           what;
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return "cannot read '" + path + "': " + std::strerror(errno);
  data.resize(expected);
  size_t got = expected ? std::fread(&data[0], 1, expected, f) : 0;
  bool bad = std::ferror(f) != 0;
  std::fclose(f);
  if (bad || got != expected)
    return "cannot read '" + path + "': short read";
  return "";
}

/// A name for the file `path` is or would be, to tell whether two paths
/// name one file: device and inode when it exists, else the resolved
/// directory plus the name.
std::string fileIdentity(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0)
    return "inode:" + std::to_string(st.st_dev) + ":" +
           std::to_string(st.st_ino);
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (dir.empty())
    dir = "/";
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  char resolved[PATH_MAX];
  if (!::realpath(dir.c_str(), resolved))
    return "path:" + path;
  return "path:" + std::string(resolved) + "/" + name;
}

/// An output file written safely: the bytes go to a temporary file in the
/// target's directory, which replaces the target only once every result has
/// been written (so a failure -- a bad second path, a full disk -- leaves
/// every old file as it was). A target that exists and is not a regular
/// file (/dev/null, a FIFO) is written directly.
class OutputFile {
public:
  explicit OutputFile(std::string target) : target(std::move(target)) {}
  OutputFile(const OutputFile &) = delete;
  OutputFile &operator=(const OutputFile &) = delete;
  ~OutputFile() { discard(); }

  /// Creates the temporary file (or opens the special file); "" or an
  /// error message.
  std::string open() {
    struct stat st;
    std::string where = target;
    if (::lstat(target.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      char resolved[PATH_MAX];
      if (::realpath(target.c_str(), resolved))
        where = resolved; // replace the link's target, not the link
    }
    bool exists = ::stat(where.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
      return "cannot write '" + target + "': it is a directory";
    if (exists && !S_ISREG(st.st_mode)) {
      fd = ::open(where.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0)
        return "cannot write '" + target + "': " + std::strerror(errno);
      direct = true;
      return "";
    }
    final = where;
    temporary = where + ".nvfp4-run.XXXXXX";
    fd = ::mkstemp(&temporary[0]);
    if (fd < 0) {
      std::string error = std::strerror(errno);
      temporary.clear();
      return "cannot write '" + target + "': " + error;
    }
    // mkstemp makes the file 0600; give it the mode a plain creation (or
    // the file it replaces) would have.
    mode_t mode;
    if (exists) {
      mode = st.st_mode & 07777;
    } else {
      mode_t mask = ::umask(0);
      ::umask(mask);
      mode = 0666 & ~mask;
    }
    ::fchmod(fd, mode);
    return "";
  }

  /// Writes all of `data`; "" or an error message.
  std::string write(const char *data, size_t bytes) {
    while (bytes) {
      ssize_t n = ::write(fd, data, bytes);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return "cannot write '" + target + "': " +
               std::strerror(n < 0 ? errno : ENOSPC);
      data += n;
      bytes -= static_cast<size_t>(n);
    }
    if (!direct && ::fsync(fd) != 0)
      return "cannot write '" + target + "': " + std::strerror(errno);
    int closed = ::close(fd);
    fd = -1;
    if (closed != 0)
      return "cannot write '" + target + "': " + std::strerror(errno);
    return "";
  }

  /// Moves the temporary file over the target; "" or an error message.
  std::string commit() {
    if (direct)
      return "";
    if (::rename(temporary.c_str(), final.c_str()) != 0)
      return "cannot write '" + target + "': " + std::strerror(errno);
    temporary.clear();
    return "";
  }

  void discard() {
    if (fd >= 0)
      ::close(fd);
    fd = -1;
    if (!temporary.empty())
      ::unlink(temporary.c_str());
    temporary.clear();
  }

private:
  std::string target, final, temporary;
  int fd = -1;
  bool direct = false;
};

std::string arrayText(const Manifest &m, const ArgumentSpec &a) {
  const BufferSpec &b = m.buffers()[a.buffer];
  return std::to_string(b.elements) + " x " + scalarTypeName(b.elementType);
}

/// --time-kernels: one line per launch (median and minimum over the
/// repetitions, share of the sum of the launches' medians), then one line
/// per kernel name (its launches' medians added up), largest first.
void printKernelTimes(const Manifest &m, const RunStats &stats) {
  const std::vector<KernelSpec> &kernels = m.kernels();
  double sum = 0;
  for (size_t k = 0; k < kernels.size(); ++k)
    sum += stats.launchMedian(k);
  auto share = [&](double ms) { return sum > 0 ? 100.0 * ms / sum : 0.0; };
  std::vector<std::string> names;
  std::map<std::string, std::pair<double, int>> byName; // ms, launches
  for (size_t k = 0; k < kernels.size(); ++k) {
    double ms = stats.launchMedian(k);
    std::printf("nvfp4-run: launch %zu %s: median %.4f ms, min %.4f ms, "
                "%.1f%%\n",
                k, kernels[k].name.c_str(), ms, stats.launchMin(k), share(ms));
    auto [it, fresh] = byName.try_emplace(kernels[k].name, 0.0, 0);
    if (fresh)
      names.push_back(kernels[k].name);
    it->second.first += ms;
    it->second.second += 1;
  }
  // Largest first; ties keep the order of first launch.
  std::stable_sort(names.begin(), names.end(),
                   [&](const std::string &a, const std::string &b) {
                     return byName[a].first > byName[b].first;
                   });
  for (const std::string &name : names)
    std::printf("nvfp4-run: kernel %s: %d launch%s, %.4f ms, %.1f%%\n",
                name.c_str(), byName[name].second,
                byName[name].second == 1 ? "" : "es", byName[name].first,
                share(byName[name].first));
  std::printf("nvfp4-run: launches: sum of medians %.4f ms\n", sum);
}

} // namespace

static int runTool(int argc, char **argv) {
  Options o;
  if (std::string error = parseOptions(argc, argv, o); !error.empty())
    return fail(error);
  if (o.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (argc == 1)
    return fail("no kernel image and no --manifest given (see --help)");
  if (o.manifest.empty())
    return fail("--manifest=FILE.json is required (see --help)");

  // 1. Everything that needs no GPU: the manifest, the image, the inputs.
  Expected<Manifest> manifest = Manifest::load(o.manifest);
  if (!manifest.ok())
    return fail(manifest.message());
  const Manifest &m = *manifest;
  if (o.describe) {
    std::fputs(m.describe().c_str(), stdout);
    return 0;
  }
  if (o.image.empty())
    return fail("no kernel image given (see --help)");
  // A host function that leaves work on the host cannot be replayed from
  // its manifest (--describe above still shows it).
  if (Status runnable = m.checkRunnable(); !runnable.ok())
    return fail(runnable.message());

  std::string image;
  {
    struct stat st;
    if (::stat(o.image.c_str(), &st) != 0)
      return fail("cannot read kernel image '" + o.image +
                  "': " + std::strerror(errno));
    if (std::string error = readInput(o.image, static_cast<size_t>(st.st_size),
                                      "it changed while being read", image);
        !error.empty())
      return fail("kernel image: " + error);
    if (detectImageKind(image) == ImageKind::Unknown)
      return fail("'" + o.image + "' is not a cubin, fatbin or PTX file");
  }

  const std::vector<ArgumentSpec> &args = m.arguments();
  auto argumentProblem = [&](const Assignment &a,
                             ArgumentSpec::Kind wanted) -> std::string {
    if (a.index >= int64_t(args.size()) ||
        args[a.index].kind == ArgumentSpec::Unused)
      return a.spelled() + ": the kernels of @" + m.function() +
             " use no argument " + std::to_string(a.index);
    const ArgumentSpec &spec = args[a.index];
    if (spec.kind != wanted)
      return a.spelled() + ": argument " + std::to_string(a.index) + " is " +
             (spec.kind == ArgumentSpec::Array
                  ? "an array of " + arrayText(m, spec) + " (use --input " +
                        std::to_string(a.index) + "=FILE)"
                  : std::string("a scalar ") + scalarTypeName(spec.type) +
                        " (use --scalar " + std::to_string(a.index) +
                        "=VALUE)");
    return "";
  };

  std::map<int64_t, std::string> inputData;
  for (const Assignment &a : o.inputs) {
    if (std::string error = argumentProblem(a, ArgumentSpec::Array);
        !error.empty())
      return fail(error);
    const ArgumentSpec &spec = args[a.index];
    std::string what = "argument " + std::to_string(a.index) + " needs " +
                       std::to_string(spec.bytes) + " (" + arrayText(m, spec) +
                       ")";
    if (std::string error =
            readInput(a.value, spec.bytes, what, inputData[a.index]);
        !error.empty())
      return fail("--input " + std::to_string(a.index) + ": " + error);
  }
  std::map<int64_t, ScalarValue> scalarValues;
  for (const Assignment &a : o.scalars) {
    if (std::string error = argumentProblem(a, ArgumentSpec::Scalar);
        !error.empty())
      return fail(error);
    Expected<ScalarValue> value = parseScalarValue(args[a.index].type, a.value);
    if (!value.ok())
      return fail(a.spelled() + ": " + value.message());
    scalarValues[a.index] = *value;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind == ArgumentSpec::Array && !inputData.count(i))
      return fail("argument " + std::to_string(i) + " (" +
                  arrayText(m, args[i]) + ") needs --input " +
                  std::to_string(i) + "=FILE");
    if (args[i].kind == ArgumentSpec::Scalar && !scalarValues.count(i))
      return fail("argument " + std::to_string(i) + " (" +
                  scalarTypeName(args[i].type) + ") needs --scalar " +
                  std::to_string(i) + "=VALUE");
  }
  for (const Assignment &a : o.outputs)
    if (a.index >= int64_t(m.results().size()) || m.results()[a.index] < 0)
      return fail(a.spelled() + ": @" + m.function() + " has no result " +
                  std::to_string(a.index) + " in a device buffer");
  // No output may overwrite another output, an input, the manifest or the
  // image; each gets its temporary file now, so that a path that cannot be
  // written fails before anything runs.
  std::map<std::string, std::string> readFiles; // identity -> what it is
  readFiles[fileIdentity(o.manifest)] = "the manifest";
  readFiles[fileIdentity(o.image)] = "the kernel image";
  for (const Assignment &a : o.inputs)
    readFiles.emplace(fileIdentity(a.value), "--input " +
                                                 std::to_string(a.index));
  std::map<std::string, int64_t> written;
  std::vector<std::unique_ptr<OutputFile>> outputFiles;
  for (const Assignment &a : o.outputs) {
    std::string id = fileIdentity(a.value);
    if (auto it = readFiles.find(id); it != readFiles.end())
      return fail(a.spelled() + ": '" + a.value + "' is " + it->second +
                  "; an output must not overwrite what the run reads");
    if (auto it = written.find(id); it != written.end())
      return fail(a.spelled() + ": '" + a.value + "' is also --output " +
                  std::to_string(it->second) + "; give each result its own "
                  "file");
    written[id] = a.index;
    outputFiles.push_back(std::make_unique<OutputFile>(a.value));
    if (std::string error = outputFiles.back()->open(); !error.empty())
      return fail(a.spelled() + ": " + error);
  }

  // 2. The GPU.
  Expected<std::shared_ptr<Device>> device = Device::open(o.device);
  if (!device.ok())
    return fail(device.message());
  Expected<std::shared_ptr<Bundle>> bundle =
      Bundle::loadFromMemory(*device, std::move(image), m);
  if (!bundle.ok())
    return fail(bundle.message());
  Expected<std::unique_ptr<Session>> session = (*bundle)->createSession();
  if (!session.ok())
    return fail(session.message());
  Session &s = **session;
  for (auto &[index, data] : inputData)
    if (Status st = s.setInput(index, data.data(), data.size()); !st.ok())
      return fail(st.message());
  inputData.clear();
  for (auto &[index, value] : scalarValues)
    if (Status st = s.setScalar(index, value); !st.ok())
      return fail(st.message());
  Expected<RunStats> stats = s.run(o.repeat, o.warmup, o.timeKernels);
  if (!stats.ok())
    return fail(stats.message());

  // Every result into its temporary file first; only when all are written
  // do they replace their targets.
  for (size_t i = 0; i < o.outputs.size(); ++i) {
    const Assignment &a = o.outputs[i];
    Expected<size_t> bytes = s.resultBytes(a.index);
    if (!bytes.ok())
      return fail(bytes.message());
    std::unique_ptr<char[]> data(new (std::nothrow) char[*bytes ? *bytes : 1]);
    if (!data)
      return fail("out of host memory for result " + std::to_string(a.index));
    if (Status st = s.getResult(a.index, data.get(), *bytes); !st.ok())
      return fail(st.message());
    if (std::string error = outputFiles[i]->write(data.get(), *bytes);
        !error.empty())
      return fail(error);
  }
  for (std::unique_ptr<OutputFile> &file : outputFiles)
    if (std::string error = file->commit(); !error.empty())
      return fail(error);

  if (o.time) {
    const Session &cs = s;
    std::printf("nvfp4-run: @%s on %s: %zu launches, %d run%s: median %.4f "
                "ms, min %.4f ms, mean %.4f ms per launch sequence\n",
                cs.manifest().function().c_str(), (*device)->name().c_str(),
                cs.manifest().kernels().size(), o.repeat,
                o.repeat == 1 ? "" : "s", stats->median(), stats->min(),
                stats->mean());
  }
  if (o.timeKernels)
    printKernelTimes(s.manifest(), *stats);
  return 0;
}

int main(int argc, char **argv) {
  try {
    return runTool(argc, argv);
  } catch (const std::bad_alloc &) {
    return fail("out of host memory");
  }
}
