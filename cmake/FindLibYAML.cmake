# SPDX-License-Identifier: BSD-3-Clause
# Find libyaml through pkg-config (yaml-0.1.pc), with a plain
# header/library search as the fallback. Used by libredlock's build and
# installed with its CMake package, so that consumers of the static library
# find the same libyaml.
#
# Defines LibYAML_FOUND, LibYAML_VERSION, LibYAML_INCLUDE_DIRS,
# LibYAML_LIBRARIES and the imported target LibYAML::LibYAML.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_LIBYAML QUIET yaml-0.1)
endif()

find_path(LibYAML_INCLUDE_DIR NAMES yaml.h HINTS ${PC_LIBYAML_INCLUDE_DIRS})
find_library(LibYAML_LIBRARY NAMES yaml HINTS ${PC_LIBYAML_LIBRARY_DIRS})
set(LibYAML_VERSION "${PC_LIBYAML_VERSION}")

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(LibYAML
  REQUIRED_VARS LibYAML_LIBRARY LibYAML_INCLUDE_DIR
  VERSION_VAR LibYAML_VERSION)

if(LibYAML_FOUND)
  set(LibYAML_INCLUDE_DIRS ${LibYAML_INCLUDE_DIR})
  set(LibYAML_LIBRARIES ${LibYAML_LIBRARY})
  if(NOT TARGET LibYAML::LibYAML)
    add_library(LibYAML::LibYAML UNKNOWN IMPORTED)
    set_target_properties(LibYAML::LibYAML PROPERTIES
      IMPORTED_LOCATION "${LibYAML_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${LibYAML_INCLUDE_DIR}")
  endif()
endif()
mark_as_advanced(LibYAML_INCLUDE_DIR LibYAML_LIBRARY)
