# SPDX-License-Identifier: BSD-3-Clause
# Find hiredis (0.14 or 1.x) through pkg-config (every hiredis ships
# hiredis.pc), with a plain header/library search as the fallback. Used
# by libredlock's build and installed with its CMake package, so that
# consumers of the static library find the same hiredis.
#
# Defines Hiredis_FOUND, Hiredis_VERSION, Hiredis_INCLUDE_DIRS,
# Hiredis_LIBRARIES and the imported target Hiredis::Hiredis.
#
# hiredis >= 1.0 may come with hiredis_ssl, its TLS support (OpenSSL). When
# the same hiredis has it, Hiredis_SSL_FOUND is true, Hiredis_SSL_LIBRARY
# names it and Hiredis::SSL is its imported target (linking OpenSSL).
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_HIREDIS QUIET hiredis)
  pkg_check_modules(PC_HIREDIS_SSL QUIET hiredis_ssl)
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

  # hiredis_ssl only next to this hiredis: its header in the same include
  # directory, its library found through the same hints.
  set(Hiredis_SSL_FOUND FALSE)
  if(EXISTS "${Hiredis_INCLUDE_DIR}/hiredis/hiredis_ssl.h")
    get_filename_component(_hiredis_libdir "${Hiredis_LIBRARY}" DIRECTORY)
    find_library(Hiredis_SSL_LIBRARY NAMES hiredis_ssl
      HINTS ${PC_HIREDIS_SSL_LIBRARY_DIRS} "${_hiredis_libdir}" NO_DEFAULT_PATH)
    find_package(OpenSSL QUIET)
    if(Hiredis_SSL_LIBRARY AND OPENSSL_FOUND)
      set(Hiredis_SSL_FOUND TRUE)
      if(NOT TARGET Hiredis::SSL)
        add_library(Hiredis::SSL UNKNOWN IMPORTED)
        set_target_properties(Hiredis::SSL PROPERTIES
          IMPORTED_LOCATION "${Hiredis_SSL_LIBRARY}"
          INTERFACE_LINK_LIBRARIES "Hiredis::Hiredis;OpenSSL::SSL;OpenSSL::Crypto")
      endif()
    endif()
  endif()
endif()
mark_as_advanced(Hiredis_INCLUDE_DIR Hiredis_LIBRARY Hiredis_SSL_LIBRARY)
