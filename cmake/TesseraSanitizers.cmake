# Sanitizer and fuzzing switches.
#
#   -DTESS_SANITIZE=address,undefined   ASan + UBSan on every target
#   -DTESS_SANITIZE=thread              TSan (use with -DTESS_WITH_MPI=OFF:
#                                       OpenMPI itself is not instrumented)
#   -DTESS_FUZZ=ON                      clang only: everything instrumented for
#                                       libFuzzer; tests/fuzz/fuzz_*.c become
#                                       executables (see tests/CMakeLists.txt)
#
# UBSan is made fatal (-fno-sanitize-recover) so a finding fails the test
# instead of scrolling past.

if(TESS_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TESS_FUZZ=ON needs clang (configure with CC=clang or "
                        "-DCMAKE_C_COMPILER=clang); found ${CMAKE_C_COMPILER_ID}")
  endif()
  if(TESS_SANITIZE)
    message(STATUS "TESS_FUZZ=ON: ignoring TESS_SANITIZE='${TESS_SANITIZE}' "
                   "(fuzz builds use address,undefined)")
  endif()
  # Libraries get coverage instrumentation without libFuzzer's main(); the fuzz
  # executables add -fsanitize=fuzzer at link time.
  set(TESS_FUZZ_COMPILE_FLAGS -fsanitize=fuzzer-no-link,address,undefined
                              -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  set(TESS_FUZZ_LINK_FLAGS -fsanitize=fuzzer,address,undefined)
  add_compile_options(${TESS_FUZZ_COMPILE_FLAGS})
  add_link_options(-fsanitize=address,undefined)
  set(TESS_SANITIZE_FLAGS "-fsanitize=address,undefined")
elseif(TESS_SANITIZE)
  string(REPLACE " " "" _tess_san "${TESS_SANITIZE}")
  if(_tess_san MATCHES "thread" AND _tess_san MATCHES "address|leak")
    message(FATAL_ERROR "TESS_SANITIZE: thread cannot be combined with address/leak")
  endif()
  set(TESS_SANITIZE_FLAGS "-fsanitize=${_tess_san}")
  add_compile_options(-fsanitize=${_tess_san} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${_tess_san})
  if(_tess_san MATCHES "undefined")
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=${_tess_san}")
  set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=${_tess_san}")
  string(MAKE_C_IDENTIFIER "TESS_SANITIZER_WORKS_${_tess_san}" _tess_san_var)
  check_c_source_compiles("int main(void) { return 0; }" ${_tess_san_var})
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NOT ${_tess_san_var})
    message(FATAL_ERROR "${CMAKE_C_COMPILER} cannot build with -fsanitize=${_tess_san}")
  endif()
else()
  set(TESS_SANITIZE_FLAGS "")
endif()
