# SPDX-License-Identifier: BSD-3-Clause
# Debian packages with `cpack -G DEB` (from a build configured with
# -DCMAKE_INSTALL_PREFIX=/usr), one per install component:
#
#   libredlockSOVERSION  runtime: the shared library (libredlock0.3: the
#                    package is named for the SONAME, libredlock.so.0.3)
#   libredlock-dev   development: header, libredlock.so/.a, redlock.pc, CMake package
#   redlock-tools    cli: the redlock tool, its man page and
#                    /etc/redlock/redlock.yaml.example
#
# The runtime's dependencies on Debian's libhiredis, libev and libyaml come
# from dpkg-shlibdeps (dpkg-dev), so they name the sonames the library was
# really linked against.
set(CPACK_PACKAGE_NAME redlock)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
# The packages' Maintainer field: who answers for them, "Name <address>"
# (Debian policy 5.6.2). Whoever builds packages for distribution sets
# their own with -DREDLOCK_DEB_MAINTAINER=...
set(REDLOCK_DEB_MAINTAINER "libredlock maintainers <maintainers@users.noreply.a-seed-832a4d62.example>"
  CACHE STRING "Maintainer field of the Debian packages: Name <address>")
if(NOT REDLOCK_DEB_MAINTAINER MATCHES "^[^<>@]*[^<>@ ] <[^<>@ ]+@[^<>@ ]+\\.[^<>@ ]+>$")
  message(FATAL_ERROR "REDLOCK_DEB_MAINTAINER must read 'Name <address>', not '${REDLOCK_DEB_MAINTAINER}'")
endif()
set(CPACK_PACKAGE_CONTACT "${REDLOCK_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${REDLOCK_DEB_MAINTAINER}")
set(CPACK_PACKAGE_FILE_NAME "redlock-${PROJECT_VERSION}")
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
# Installed with DESTDIR, CMAKE_INSTALL_PREFIX is the package's own (/usr)
# while cpack installs: redlock.pc says prefix=/usr (not the staging
# directory), and /etc/redlock/ (outside the prefix) is packaged.
set(CPACK_SET_DESTDIR ON)
# Each package's description is its own, first line included (CPack would
# put CPACK_PACKAGE_DESCRIPTION_SUMMARY, the same for all, in front of it).
set(CPACK_PROJECT_CONFIG_FILE "${PROJECT_SOURCE_DIR}/cmake/CPackProject.cmake")
set(CPACK_COMPONENTS_ALL runtime development cli)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME "libredlock${REDLOCK_SOVERSION}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION
  "Redlock distributed locks over Redis masters - shared library\nLocks held on a majority of independent Redis masters (Redlock), with\nparallel requests, per-master timeouts and automatic extension.\n\nThis package holds the shared library, libredlock.so.${REDLOCK_SOVERSION}.")

set(_redlock_runtime_dep "libredlock${REDLOCK_SOVERSION} (= ${PROJECT_VERSION}-1)")
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME "libredlock-dev")
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS
  "${_redlock_runtime_dep}, libhiredis-dev, libev-dev, libyaml-dev, pkg-config")
set(CPACK_DEBIAN_DEVELOPMENT_DESCRIPTION
  "Redlock distributed locks over Redis masters - development files\nLocks held on a majority of independent Redis masters (Redlock), from C\nwith a blocking or a libev API.\n\nThis package holds the header, the static library, the pkg-config and\nCMake files, and the documentation.")

set(CPACK_DEBIAN_CLI_PACKAGE_NAME "redlock-tools")
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION utils)
# The tool links libredlock and libev; dpkg-shlibdeps would look for
# libredlock in the system, where it is not yet, so the dependencies are
# stated.
set(CPACK_DEBIAN_CLI_PACKAGE_DEPENDS "${_redlock_runtime_dep}, libev4 (>= 1:4.11), libjansson4 (>= 2.14), libc6 (>= 2.34)")
set(CPACK_DEBIAN_CLI_DESCRIPTION
  "Redlock distributed locks over Redis masters - command-line tool\nredlock runs a command while holding a lock on a majority of Redis\nmasters, like flock(1) across machines, and shows who holds a lock.\n\nThis package holds the redlock tool, its manual, its bash and zsh\ncompletion and an example configuration,\n/etc/redlock/redlock.yaml.example.")

# Each package's /usr/share/doc/PACKAGE (share/doc/PACKAGE under any
# prefix). First the copyright file: who holds the copyright, the licence's
# name, then LICENSE as it is.
file(READ "${PROJECT_SOURCE_DIR}/LICENSE" _redlock_license)
file(WRITE "${PROJECT_BINARY_DIR}/debian-copyright"
"libredlock: the Redlock library, its headers and the redlock tool.

Copyright: 2026 The libredlock authors
License: BSD-3-Clause

${_redlock_license}")
# The documentation, as in the sources (its relative links still work):
# libredlock-dev gets all of it, README.md and CHANGELOG.md included;
# redlock-tools gets the tool's pages, docs/cli.md and docs/config.md (the
# configuration file), which redlock(1) refers to. docs/cli.md is the one the
# build generates (tool/CMakeLists.txt), as the man page.
set(_redlock_dev_doc "${CMAKE_INSTALL_DATAROOTDIR}/doc/${CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME}")
set(_redlock_cli_doc "${CMAKE_INSTALL_DATAROOTDIR}/doc/${CPACK_DEBIAN_CLI_PACKAGE_NAME}")
install(FILES README.md CHANGELOG.md DESTINATION "${_redlock_dev_doc}" COMPONENT development)
install(DIRECTORY docs/ DESTINATION "${_redlock_dev_doc}/docs" COMPONENT development
  FILES_MATCHING PATTERN "*.md" PATTERN "cli.md" EXCLUDE)
install(FILES "${REDLOCK_CLI_MD}" DESTINATION "${_redlock_dev_doc}/docs" COMPONENT development)
install(FILES "${REDLOCK_CLI_MD}" docs/config.md DESTINATION "${_redlock_cli_doc}/docs"
  COMPONENT cli)

foreach(_redlock_component IN ITEMS RUNTIME DEVELOPMENT CLI)
  string(TOLOWER "${_redlock_component}" _redlock_component_lc)
  install(FILES "${PROJECT_BINARY_DIR}/debian-copyright"
    DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/${CPACK_DEBIAN_${_redlock_component}_PACKAGE_NAME}"
    RENAME copyright COMPONENT ${_redlock_component_lc})
endforeach()

include(CPack)
