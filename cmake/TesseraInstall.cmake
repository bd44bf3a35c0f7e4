# Install rules: libtessera.so*, the public headers, the `tessera` command, a
# pkg-config file and a CMake package (find_package(tessera) -> tessera::tessera).
#
# Both package descriptions are relocatable: they locate the prefix from their
# own installed position, so `cmake --install build --prefix DIR` works for any
# DIR chosen after configuring.

# What a program needs for bitwise results (docs/building.md, "Compiler
# flags"): no fused multiply-add in its own kernels either.  Exported with
# the target, so find_package users compile with it; the .pc file's Cflags
# carry it for pkg-config users.
set(TESS_EXPORTED_CFLAGS "-ffp-contract=off")
target_compile_options(tessera INTERFACE ${TESS_EXPORTED_CFLAGS})

install(TARGETS tessera
  EXPORT tesseraTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/tessera"
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

if(TARGET tessera_cli)
  install(TARGETS tessera_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# ---- pkg-config
# ${pcfiledir} is <prefix>/<libdir>/pkgconfig; walk up to the prefix.
set(_tess_pc_dir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(TESS_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  set(TESS_PC_PREFIX "\${pcfiledir}")
  string(REPLACE "/" ";" _tess_parts "${_tess_pc_dir}")
  foreach(_p IN LISTS _tess_parts)
    if(NOT _p STREQUAL "")
      string(APPEND TESS_PC_PREFIX "/..")
    endif()
  endforeach()
endif()
set(TESS_PC_LIBS_PRIVATE "-lpthread -lm")
if(TESS_HAVE_ZSTD)
  string(APPEND TESS_PC_LIBS_PRIVATE " -lzstd")
endif()
if(TESS_HAVE_XXHASH)
  string(APPEND TESS_PC_LIBS_PRIVATE " -lxxhash")
endif()
configure_file("${PROJECT_SOURCE_DIR}/cmake/tessera.pc.in"
               "${PROJECT_BINARY_DIR}/tessera.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/tessera.pc" DESTINATION "${_tess_pc_dir}")

# ---- CMake package
set(TESS_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/tessera")
install(EXPORT tesseraTargets
  NAMESPACE tessera::
  FILE tesseraTargets.cmake
  DESTINATION "${TESS_CMAKE_DIR}")
configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/tesseraConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/tesseraConfig.cmake"
  INSTALL_DESTINATION "${TESS_CMAKE_DIR}")
# 0.x releases promise nothing across minor versions.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_tess_compat SameMinorVersion)
else()
  set(_tess_compat SameMajorVersion)
endif()
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/tesseraConfigVersion.cmake"
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY ${_tess_compat})
install(FILES
  "${PROJECT_BINARY_DIR}/tesseraConfig.cmake"
  "${PROJECT_BINARY_DIR}/tesseraConfigVersion.cmake"
  DESTINATION "${TESS_CMAKE_DIR}")
