# Find hwloc (https://www.open-mpi.org/projects/hwloc/), for UTC's CMake package.
#
# Defines the imported target PkgConfig::HWLOC (the name UTC's own build links to, from
# pkg_check_modules) and HWLOC_FOUND, HWLOC_VERSION. Uses pkg-config when there is one,
# else looks for hwloc.h and libhwloc.
if(NOT TARGET PkgConfig::HWLOC)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(HWLOC QUIET IMPORTED_TARGET hwloc)
  endif()
endif()
if(NOT TARGET PkgConfig::HWLOC)
  find_path(HWLOC_INCLUDE_DIR hwloc.h)
  find_library(HWLOC_LIBRARY hwloc)
  if(HWLOC_INCLUDE_DIR AND HWLOC_LIBRARY)
    add_library(PkgConfig::HWLOC INTERFACE IMPORTED)
    set_target_properties(PkgConfig::HWLOC PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${HWLOC_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES "${HWLOC_LIBRARY}")
  endif()
  mark_as_advanced(HWLOC_INCLUDE_DIR HWLOC_LIBRARY)
endif()
if(TARGET PkgConfig::HWLOC)
  set(HWLOC_TARGET PkgConfig::HWLOC)
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(HWLOC
  REQUIRED_VARS HWLOC_TARGET
  VERSION_VAR HWLOC_VERSION
  REASON_FAILURE_MESSAGE "hwloc not found (Debian: apt-get install libhwloc-dev)")
