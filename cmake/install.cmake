# Install rules and the CMake package, so that another project can
#   find_package(kiln REQUIRED)
#   target_link_libraries(my_target PRIVATE kiln::kiln)
# Included at the end of the top-level CMakeLists.txt, once every target exists.
#
# Components:
#   kiln_runtime  libkiln_runtime.so.* and kiln's own plugin library (what a deployment ships)
#   kiln_dev      headers, libkiln.so.* (network API, builder) and the .so links, the CMake package
#                 files
#   kiln_cli      the `kiln` command line
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KILN_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/kiln"
    CACHE STRING "Where the kiln CMake package files are installed, relative to the prefix")

# The public headers need C++17 (plugin_utils.h); say so to consumers.
target_compile_features(kiln_runtime INTERFACE cxx_std_17)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kiln
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT kiln_dev
        FILES_MATCHING PATTERN "*.h")

install(TARGETS kiln_runtime EXPORT kilnTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          COMPONENT kiln_runtime NAMELINK_COMPONENT kiln_dev
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT kiln_dev
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT kiln_runtime
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS kiln EXPORT kilnTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          COMPONENT kiln_dev NAMELINK_COMPONENT kiln_dev
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT kiln_dev
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT kiln_runtime
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# Installed binaries find libkiln next to them (relative, so the prefix can move).
file(RELATIVE_PATH kiln_bin_to_lib "${CMAKE_INSTALL_FULL_BINDIR}" "${CMAKE_INSTALL_FULL_LIBDIR}")

# kiln's own plugin library: a shared library like any third-party one. Exported as
# kiln::kiln_plugins so that a project can hand $<TARGET_FILE:kiln::kiln_plugins> to
# PluginRegistry::loadLibrary() or link it.
if(TARGET kiln_plugins)
  get_target_property(kiln_plugins_type kiln_plugins TYPE)
  if(kiln_plugins_type STREQUAL "SHARED_LIBRARY" OR kiln_plugins_type STREQUAL "MODULE_LIBRARY")
    set_target_properties(kiln_plugins PROPERTIES INSTALL_RPATH "$ORIGIN")
    install(TARGETS kiln_plugins EXPORT kilnTargets
            LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
              COMPONENT kiln_runtime NAMELINK_COMPONENT kiln_dev
            RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT kiln_runtime)
  else()
    message(STATUS "kiln_plugins is a ${kiln_plugins_type}, not a shared library: not installed")
  endif()
endif()

if(TARGET kiln_cli)
  set_target_properties(kiln_cli PROPERTIES INSTALL_RPATH "$ORIGIN/${kiln_bin_to_lib}")
  install(TARGETS kiln_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT kiln_cli)
endif()

install(EXPORT kilnTargets
        NAMESPACE kiln::
        FILE kilnTargets.cmake
        DESTINATION ${KILN_INSTALL_CMAKEDIR}
        COMPONENT kiln_dev)

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/kilnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kilnConfig.cmake
  INSTALL_DESTINATION ${KILN_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
# Before 1.0 a minor release may change the API and the plugin ABI: only the same minor matches.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kilnConfig.cmake ${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
        DESTINATION ${KILN_INSTALL_CMAKEDIR}
        COMPONENT kiln_dev)
