# The Python module `tessera` (docs/python.md): the C extension
# tessera._tessera, linked against libtessera.so, and the pure-Python package
# around it, assembled in ${CMAKE_BINARY_DIR}/python (PYTHONPATH=build/python)
# and installed into <prefix>/lib/pythonX.Y/site-packages.  Built only when
# Python 3's headers and NumPy are found (scripts/deps.sh installs
# python3-dev and python3-numpy); off by default in sanitizer builds, whose
# runtimes the interpreter does not load (-DTESS_PYTHON=ON forces it).
if(TESS_SANITIZE OR TESS_FUZZ)
  set(_tess_python_default OFF)
else()
  set(_tess_python_default ON)
endif()
option(TESS_PYTHON "Build the Python module (needs python3-dev and python3-numpy)"
       ${_tess_python_default})

set(TESS_HAVE_PYTHON 0)
if(TESS_PYTHON)
  # Debian's interpreter, the one its python3-numpy and python3-pytest serve
  # (a pyenv python3 first on PATH would not import them).
  if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "Python 3 interpreter")
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module NumPy)
  if(Python3_Development.Module_FOUND AND Python3_NumPy_FOUND)
    set(TESS_HAVE_PYTHON 1)
  else()
    message(STATUS "Python 3 headers or NumPy not found: no Python module "
                   "(apt-get install python3-dev python3-numpy)")
  endif()
endif()

if(TESS_HAVE_PYTHON)
  set(TESS_PYTHON_DIR "${CMAKE_BINARY_DIR}/python")
  tess_glob_flat(TESS_PYTHON_C_SOURCES "${PROJECT_SOURCE_DIR}/python/*.c")
  Python3_add_library(tessera_python MODULE ${TESS_PYTHON_C_SOURCES})
  set(_tess_py_site
      "${CMAKE_INSTALL_LIBDIR}/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/site-packages")
  file(RELATIVE_PATH _tess_py_rpath "/x/${_tess_py_site}/tessera" "/x/${CMAKE_INSTALL_LIBDIR}")
  set_target_properties(tessera_python PROPERTIES
    OUTPUT_NAME _tessera
    LIBRARY_OUTPUT_DIRECTORY "${TESS_PYTHON_DIR}/tessera"
    C_VISIBILITY_PRESET hidden
    INSTALL_RPATH "$ORIGIN/${_tess_py_rpath}")
  # CPython's own macros trip -Wextra's missing-field-initializers.
  target_compile_options(tessera_python PRIVATE -Wno-missing-field-initializers)
  target_link_libraries(tessera_python PRIVATE tessera)
  # OpenCL kernels given as source (python/tess_py_tile.c) need CL/cl.h.
  target_compile_definitions(tessera_python PRIVATE TESS_HAVE_OPENCL=${TESS_HAVE_OPENCL})
  if(TESS_HAVE_OPENCL)
    target_link_libraries(tessera_python PRIVATE OpenCL::OpenCL)
  endif()
  # The pure-Python part, copied next to the extension whenever it changes.
  tess_glob_flat(TESS_PYTHON_SOURCES "${PROJECT_SOURCE_DIR}/python/tessera/*.py")
  set(_tess_py_copies "")
  foreach(_py IN LISTS TESS_PYTHON_SOURCES)
    get_filename_component(_pyname "${_py}" NAME)
    add_custom_command(OUTPUT "${TESS_PYTHON_DIR}/tessera/${_pyname}"
      COMMAND ${CMAKE_COMMAND} -E copy "${_py}" "${TESS_PYTHON_DIR}/tessera/${_pyname}"
      DEPENDS "${_py}" VERBATIM)
    list(APPEND _tess_py_copies "${TESS_PYTHON_DIR}/tessera/${_pyname}")
  endforeach()
  add_custom_target(tessera_python_files ALL DEPENDS ${_tess_py_copies})
  add_dependencies(tessera_python tessera_python_files)
  install(TARGETS tessera_python LIBRARY DESTINATION "${_tess_py_site}/tessera")
  install(FILES ${TESS_PYTHON_SOURCES} DESTINATION "${_tess_py_site}/tessera")
endif()

# The pytest suite (tests/python), fast tier; under mpirun too when MPI is usable.
if(TESS_HAVE_PYTHON AND TESS_BUILD_TESTS AND NOT TESS_TILES_ONLY)
  # TESSERA: compare with `tessera run pagerank`; TESS_CMAKE, TESS_BUILD_DIR:
  # install this build into a temporary prefix and import from there.
  set(_tess_py_env
      "PYTHONPATH=${TESS_PYTHON_DIR}" "TESSERA=${CMAKE_BINARY_DIR}/tessera"
      "TESS_HAVE_MPI=${TESS_HAVE_MPI}" "TESS_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
      "TESS_CMAKE=${CMAKE_COMMAND}" "TESS_BUILD_DIR=${CMAKE_BINARY_DIR}"
      "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
      "OMPI_MCA_btl_vader_single_copy_mechanism=none")
  add_test(NAME python_tables
           COMMAND ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider
                   "${PROJECT_SOURCE_DIR}/tests/python"
           WORKING_DIRECTORY "${PROJECT_BINARY_DIR}")
  set_tests_properties(python_tables PROPERTIES
    TIMEOUT 120
    LABELS "fast;python"
    SKIP_RETURN_CODE 5
    ENVIRONMENT "${_tess_py_env}")
endif()
