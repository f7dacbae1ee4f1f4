#===- cmake/Sanitizers.cmake - NVFP4_SANITIZE and NVFP4_BUILD_FUZZERS ----===#
#
# -DNVFP4_SANITIZE=address,undefined builds every target of this project
# (libraries, tools, unit tests, the plugin and the Python module) with
# -fsanitize=<list> -fno-omit-frame-pointer at compile and link time.
# Debian's libMLIR.so / libLLVM.so are not instrumented: ASan still sees
# every heap object (it intercepts malloc) and checks every access our code
# makes; UBSan checks our code only. scripts/sanitize.sh runs the whole lit
# and unit suite in such a build (build-asan/).
#
# -DNVFP4_BUILD_FUZZERS=ON (clang only) adds fuzz/: libFuzzer targets that
# feed arbitrary bytes to the parser, verifier and every nvfp4 pass.
# scripts/fuzz.sh configures build-fuzz/ with it.
#
# Included from the top-level CMakeLists.txt before any target is defined,
# so add_compile_options/add_link_options reach all of them.
#
#===----------------------------------------------------------------------===#

set(NVFP4_SANITIZE "" CACHE STRING
  "Comma-separated -fsanitize= list for nvfp4's own code (e.g. address,undefined)")
option(NVFP4_BUILD_FUZZERS "Build the libFuzzer targets in fuzz/ (clang only)" OFF)

# The runtime libraries a process that is *not* linked against them (Debian's
# python3 loading our extension, Debian's mlir-opt loading our plugin) must
# LD_PRELOAD; test/lit.cfg.py reads this.
set(NVFP4_SANITIZER_PRELOAD "")

if(NVFP4_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "NVFP4_SANITIZE needs GCC or Clang "
                        "(found ${CMAKE_CXX_COMPILER_ID})")
  endif()
  set(nvfp4_sanitizer_flags
    -fsanitize=${NVFP4_SANITIZE}
    -fno-omit-frame-pointer
    # Make a UBSan report fatal (exit status != 0) whatever UBSAN_OPTIONS say,
    # so lit cannot miss one that is printed to a discarded stderr.
    -fno-sanitize-recover=all)
  add_compile_options(${nvfp4_sanitizer_flags})
  add_link_options(${nvfp4_sanitizer_flags})
  message(STATUS "nvfp4: sanitizers ${NVFP4_SANITIZE}")

  # GCC links the runtimes dynamically (libasan.so, libubsan.so); clang links
  # them statically into executables, and a preload is then only needed for
  # the shared objects, where clang's shared runtime has another name.
  string(REPLACE "," ";" nvfp4_sanitizer_list "${NVFP4_SANITIZE}")
  set(nvfp4_runtime_names)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    if("address" IN_LIST nvfp4_sanitizer_list)
      # libstdc++ too: when python3 dlopens our module after ASan started,
      # ASan's __cxa_throw interceptor finds no real __cxa_throw and aborts
      # at the first C++ exception unless libstdc++ was loaded up front.
      list(APPEND nvfp4_runtime_names libasan.so libstdc++.so.6)
    elseif("undefined" IN_LIST nvfp4_sanitizer_list)
      list(APPEND nvfp4_runtime_names libubsan.so)
    endif()
  elseif("address" IN_LIST nvfp4_sanitizer_list)
    list(APPEND nvfp4_runtime_names
      libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so)
  endif()
  foreach(name IN LISTS nvfp4_runtime_names)
    execute_process(
      COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${name}
      OUTPUT_VARIABLE path OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(EXISTS "${path}")
      get_filename_component(path "${path}" REALPATH)
      list(APPEND NVFP4_SANITIZER_PRELOAD "${path}")
    else()
      message(WARNING "nvfp4: sanitizer runtime ${name} not found; Python "
                      "and plugin tests will not load")
    endif()
  endforeach()
  string(REPLACE ";" ":" NVFP4_SANITIZER_PRELOAD "${NVFP4_SANITIZER_PRELOAD}")
endif()

if(NVFP4_BUILD_FUZZERS AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "NVFP4_BUILD_FUZZERS needs clang (libFuzzer); configure "
                      "with -DCMAKE_CXX_COMPILER=clang++-22 (scripts/fuzz.sh does)")
endif()

# libFuzzer is guided by coverage of instrumented code, and only our code is
# instrumented (libMLIR.so is Debian's): give every nvfp4 library coverage
# counters; the fuzz targets themselves link with -fsanitize=fuzzer.
if(NVFP4_BUILD_FUZZERS)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
