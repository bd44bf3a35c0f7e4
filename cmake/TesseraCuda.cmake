# TesseraCuda.cmake — finds nvcc by itself ($CUDA_HOME, then /usr/local/cuda,
# then PATH) and sets up the tiles applications' CUDA kernels.
#
# No CUDA runtime is linked: src/tile/cuda.c loads the driver (libcuda.so.1)
# at run time, and each kernel file is compiled by nvcc into a fat binary
# (SASS for sm_75, sm_80 and sm_90 plus PTX of compute_90 for newer GPUs to
# JIT) that is embedded as a byte array and loaded with cuModuleLoadData.  So
# one binary starts everywhere, with or without a driver or a GPU, and no
# CUDA language support of CMake (nor its minutes of compiler probing) is
# needed.
#
# Sets TESS_HAVE_CUDA (0/1), TESS_NVCC, TESS_CUDA_ARCHS (text for `tessera
# info`) and defines tess_cuda_fatbin(<out_c_var> <symbol> <cu file>).

set(TESS_CUDA_ARCH_LIST "75;80;90" CACHE STRING
    "SASS architectures of the CUDA kernels (PTX of the last one is embedded too)")

find_program(TESS_NVCC nvcc
  HINTS "$ENV{CUDA_HOME}/bin" "$ENV{CUDA_PATH}/bin" /usr/local/cuda/bin
  NO_CACHE)
if(TESS_NVCC)
  set(_tess_cuda_default ON)
else()
  set(_tess_cuda_default OFF)
endif()
option(TESS_WITH_CUDA "Build the CUDA processors of the tiles face (needs nvcc at build time only)"
       ${_tess_cuda_default})

set(TESS_HAVE_CUDA 0)
set(TESS_CUDA_ARCHS "")
if(TESS_WITH_CUDA AND NOT TESS_NVCC)
  message(WARNING "TESS_WITH_CUDA=ON but nvcc was not found (set CUDA_HOME): "
                  "building without CUDA processors")
elseif(TESS_WITH_CUDA)
  set(TESS_HAVE_CUDA 1)
  set(_tess_gencode "")
  set(_tess_last "")
  foreach(_a ${TESS_CUDA_ARCH_LIST})
    list(APPEND _tess_gencode "-gencode=arch=compute_${_a},code=sm_${_a}")
    string(APPEND TESS_CUDA_ARCHS "sm_${_a} ")
    set(_tess_last ${_a})
  endforeach()
  list(APPEND _tess_gencode "-gencode=arch=compute_${_tess_last},code=compute_${_tess_last}")
  string(APPEND TESS_CUDA_ARCHS "compute_${_tess_last}(PTX)")
  # Bitwise equality with the CPU kernels: no contraction into fused
  # multiply-adds, IEEE division and square root, no fast math.
  set(TESS_NVCC_FLAGS --fatbin -O3 --fmad=false -prec-div=true -prec-sqrt=true -ftz=false
      ${_tess_gencode})
  message(STATUS "CUDA kernels: ${TESS_NVCC} (${TESS_CUDA_ARCHS})")
endif()

# tess_cuda_fatbin(VAR SYMBOL FILE.cu [DEPENDS headers...]): compile FILE.cu
# into a fat binary and a C file that defines `const unsigned char SYMBOL[]`
# holding it; the C file's path is appended to VAR.
function(tess_cuda_fatbin var symbol cu)
  cmake_parse_arguments(ARG "" "" "DEPENDS" ${ARGN})
  get_filename_component(_name "${cu}" NAME_WE)
  set(_fatbin "${CMAKE_BINARY_DIR}/generated/cuda/${_name}.fatbin")
  set(_c "${CMAKE_BINARY_DIR}/generated/cuda/${_name}_fatbin.c")
  add_custom_command(
    OUTPUT "${_c}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${CMAKE_BINARY_DIR}/generated/cuda"
    COMMAND "${TESS_NVCC}" ${TESS_NVCC_FLAGS} -I "${PROJECT_SOURCE_DIR}/apps"
            -o "${_fatbin}" "${cu}"
    COMMAND "${CMAKE_COMMAND}" -DIN=${_fatbin} -DOUT=${_c} -DSYMBOL=${symbol}
            -P "${PROJECT_SOURCE_DIR}/cmake/TesseraEmbed.cmake"
    DEPENDS "${cu}" ${ARG_DEPENDS} "${PROJECT_SOURCE_DIR}/cmake/TesseraEmbed.cmake"
    COMMENT "nvcc ${_name}.cu (${TESS_CUDA_ARCHS})"
    VERBATIM)
  set(${var} ${${var}} "${_c}" PARENT_SCOPE)
endfunction()
