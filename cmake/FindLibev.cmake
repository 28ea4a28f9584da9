# SPDX-License-Identifier: BSD-3-Clause
# Find libev. Debian's libev-dev ships no pkg-config file, so pkg-config is
# tried first (other distributions have one) and a plain header/library
# search is the fallback.
#
# Defines Libev_FOUND, Libev_INCLUDE_DIRS, Libev_LIBRARIES and the imported
# target Libev::Libev.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_LIBEV QUIET libev)
endif()

find_path(Libev_INCLUDE_DIR NAMES ev.h HINTS ${PC_LIBEV_INCLUDE_DIRS} PATH_SUFFIXES libev)
find_library(Libev_LIBRARY NAMES ev HINTS ${PC_LIBEV_LIBRARY_DIRS})

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Libev REQUIRED_VARS Libev_LIBRARY Libev_INCLUDE_DIR)

if(Libev_FOUND)
  set(Libev_INCLUDE_DIRS ${Libev_INCLUDE_DIR})
  set(Libev_LIBRARIES ${Libev_LIBRARY})
  if(NOT TARGET Libev::Libev)
    add_library(Libev::Libev UNKNOWN IMPORTED)
    set_target_properties(Libev::Libev PROPERTIES
      IMPORTED_LOCATION "${Libev_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${Libev_INCLUDE_DIR}")
  endif()
endif()
mark_as_advanced(Libev_INCLUDE_DIR Libev_LIBRARY)
