# SPDX-License-Identifier: BSD-3-Clause
# Read by cpack for each generator (CPACK_PROJECT_CONFIG_FILE,
# cmake/Packaging.cmake). The Debian packages' descriptions carry their own
# first line; CPack puts the common summary in front of a description
# whenever one is set, so it is not, for them.
if(CPACK_GENERATOR STREQUAL "DEB")
  unset(CPACK_PACKAGE_DESCRIPTION_SUMMARY)
endif()
