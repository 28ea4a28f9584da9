# SPDX-License-Identifier: BSD-3-Clause
# Find hiredis (0.14 or 1.x) through pkg-config (every hiredis ships
# hiredis.pc), with a plain header/library search as the fallback. Used
# by libredlock's build and installed with its CMake package, so that
# consumers of the static library find the same hiredis.
#
# Defines Hiredis_FOUND, Hiredis_VERSION, Hiredis_INCLUDE_DIRS,
# Hiredis_LIBRARIES and the imported target Hiredis::Hiredis.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_HIREDIS QUIET hiredis)
endif()

find_path(Hiredis_INCLUDE_DIR NAMES hiredis/hiredis.h HINTS ${PC_HIREDIS_INCLUDE_DIRS})
find_library(Hiredis_LIBRARY NAMES hiredis HINTS ${PC_HIREDIS_LIBRARY_DIRS})
set(Hiredis_VERSION "${PC_HIREDIS_VERSION}")

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Hiredis
  REQUIRED_VARS Hiredis_LIBRARY Hiredis_INCLUDE_DIR
  VERSION_VAR Hiredis_VERSION)

if(Hiredis_FOUND)
  set(Hiredis_INCLUDE_DIRS ${Hiredis_INCLUDE_DIR})
  set(Hiredis_LIBRARIES ${Hiredis_LIBRARY})
  if(NOT TARGET Hiredis::Hiredis)
    add_library(Hiredis::Hiredis UNKNOWN IMPORTED)
    set_target_properties(Hiredis::Hiredis PROPERTIES
      IMPORTED_LOCATION "${Hiredis_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${Hiredis_INCLUDE_DIR}")
  endif()
endif()
mark_as_advanced(Hiredis_INCLUDE_DIR Hiredis_LIBRARY)
