# SPDX-License-Identifier: BSD-3-Clause
# What `cmake --install` puts where (GNUInstallDirs), in three components,
# which are also the three Debian packages (cmake/Packaging.cmake):
#
#   runtime      libredlock.so.MAJOR and its versioned file
#   development  the headers (C, and the C++ face), libredlock.so, libredlock.a, redlock.pc, and the
#                CMake package: find_package(redlock) gives redlock::redlock
#                (shared) and redlock::redlock_static
#   cli          the redlock tool, its man page, its bash and zsh
#                completion, and an example config
#                (etc/redlock/redlock.yaml.example; /etc/... for prefix /usr)
#
# The copyright file and the documentation go to share/doc/PACKAGE, after
# the Debian package names (cmake/Packaging.cmake).
include(CMakePackageConfigHelpers)

set(REDLOCK_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/redlock")

install(TARGETS redlock redlock_static
  EXPORT redlockTargets
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT runtime
    NAMELINK_COMPONENT development
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT development
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
# redlock.hpp: the header-only C++17 face over redlock.h (docs/cpp.md).
install(FILES include/redlock/redlock.h include/redlock/redlock.hpp
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/redlock" COMPONENT development)

install(EXPORT redlockTargets
  NAMESPACE redlock::
  FILE redlockTargets.cmake
  DESTINATION "${REDLOCK_CMAKE_DIR}" COMPONENT development)
# The package config says whether the library has TLS (redlock_TLS).
set(REDLOCK_CONFIG_TLS OFF)
if(REDLOCK_TLS)
  set(REDLOCK_CONFIG_TLS ON)
endif()
configure_package_config_file(cmake/redlockConfig.cmake.in
  "${PROJECT_BINARY_DIR}/redlockConfig.cmake"
  INSTALL_DESTINATION "${REDLOCK_CMAKE_DIR}")
# 0.x: every minor version may break the API, so only the same minor
# matches; from 1.0 on, the same major.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_redlock_compat SameMinorVersion)
else()
  set(_redlock_compat SameMajorVersion)
endif()
write_basic_package_version_file("${PROJECT_BINARY_DIR}/redlockConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY ${_redlock_compat})
install(FILES
  "${PROJECT_BINARY_DIR}/redlockConfig.cmake"
  "${PROJECT_BINARY_DIR}/redlockConfigVersion.cmake"
  cmake/FindHiredis.cmake
  cmake/FindLibYAML.cmake
  cmake/FindLibev.cmake
  DESTINATION "${REDLOCK_CMAKE_DIR}" COMPONENT development)

# pkg-config. The public header includes no dependency's header, so Cflags
# is our include directory alone: hiredis and libyaml are private to the
# library, and naming them in Requires.private would put their Cflags
# (hiredis's include directory, -D_FILE_OFFSET_BITS=64) into every
# `pkg-config --cflags redlock`. They are plain -l flags in Libs.private
# instead, for static links. The asynchronous API runs on the caller's
# libev loop, so -lev is in Libs (libev has no .pc file on Debian). A
# dependency outside the compiler's own directories also gets its -L (or
# libev its -I).
function(_redlock_pc_link out library name)
  get_filename_component(_dir "${library}" DIRECTORY)
  set(_flags "-l${name}")
  if(_dir AND NOT _dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
    set(_flags "-L${_dir} ${_flags}")
  endif()
  set(${out} "${_flags}" PARENT_SCOPE)
endfunction()
_redlock_pc_link(REDLOCK_PC_LIBEV "${Libev_LIBRARY}" ev)
_redlock_pc_link(_redlock_pc_hiredis "${Hiredis_LIBRARY}" hiredis)
_redlock_pc_link(_redlock_pc_yaml "${LibYAML_LIBRARY}" yaml)
set(REDLOCK_PC_LIBS_PRIVATE "${_redlock_pc_hiredis} ${_redlock_pc_yaml} -pthread")
# With TLS, hiredis_ssl and OpenSSL too; `pkg-config --variable=tls redlock`
# says whether this build has TLS.
set(REDLOCK_PC_TLS no)
if(REDLOCK_TLS)
  set(REDLOCK_PC_TLS yes)
  _redlock_pc_link(_redlock_pc_hiredis_ssl "${Hiredis_SSL_LIBRARY}" hiredis_ssl)
  set(REDLOCK_PC_LIBS_PRIVATE "${_redlock_pc_hiredis_ssl} ${REDLOCK_PC_LIBS_PRIVATE} -lssl -lcrypto")
endif()
set(REDLOCK_PC_LIBEV_CFLAGS "")
if(NOT Libev_INCLUDE_DIR IN_LIST CMAKE_C_IMPLICIT_INCLUDE_DIRECTORIES)
  set(REDLOCK_PC_LIBEV_CFLAGS " -I${Libev_INCLUDE_DIR}")
endif()

# The prefix is the one installed to, written at install time
# (cmake/InstallPkgConfig.cmake.in): prefix=/usr in the Debian packages,
# /usr/local or DIR with `cmake --install [--prefix DIR]`; libdir and
# includedir are ${prefix}-relative, so pkg-config gives canonical paths
# (and none at all for /usr/include).
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(REDLOCK_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  set(REDLOCK_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(REDLOCK_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(REDLOCK_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
set(REDLOCK_PC_PREFIX_MARK "@REDLOCK_PC_PREFIX@")
set(REDLOCK_PC_PREFIX "${REDLOCK_PC_PREFIX_MARK}")
set(REDLOCK_PC_TEMPLATE "${PROJECT_BINARY_DIR}/redlock.pc.in")
configure_file(cmake/redlock.pc.in "${REDLOCK_PC_TEMPLATE}" @ONLY)
configure_file(cmake/InstallPkgConfig.cmake.in "${PROJECT_BINARY_DIR}/InstallPkgConfig.cmake" @ONLY)
install(SCRIPT "${PROJECT_BINARY_DIR}/InstallPkgConfig.cmake" COMPONENT development)

# An example configuration, never the configuration itself:
# /etc/redlock/redlock.yaml.example from the package (prefix /usr),
# PREFIX/etc/redlock/redlock.yaml.example otherwise. An operator's
# redlock.yaml beside it is never touched.
if(CMAKE_INSTALL_FULL_SYSCONFDIR STREQUAL "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_SYSCONFDIR}")
  set(REDLOCK_SYSCONF_DIR "${CMAKE_INSTALL_SYSCONFDIR}/redlock")
else()
  set(REDLOCK_SYSCONF_DIR "${CMAKE_INSTALL_FULL_SYSCONFDIR}/redlock")
endif()
install(FILES config/redlock.yaml DESTINATION "${REDLOCK_SYSCONF_DIR}"
  RENAME redlock.yaml.example COMPONENT cli)

# The tool finds the library through the system's search path when
# installed there, through a relative RUNPATH when installed elsewhere.
list(FIND CMAKE_C_IMPLICIT_LINK_DIRECTORIES
  "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}" _redlock_system_libdir)
if(_redlock_system_libdir EQUAL -1)
  file(RELATIVE_PATH _redlock_bin_to_lib "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}"
    "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}")
  set_target_properties(redlock-cli PROPERTIES INSTALL_RPATH "\$ORIGIN/${_redlock_bin_to_lib}")
endif()
install(TARGETS redlock-cli RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT cli)
# The man page the build generates (tool/CMakeLists.txt).
install(FILES "${REDLOCK_MAN_PAGE}" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1" COMPONENT cli)
# The shell completion the build generates, where bash-completion loads it
# on demand and where Debian's zsh looks for packages' functions.
install(FILES "${REDLOCK_BASH_COMPLETION}"
  DESTINATION "${CMAKE_INSTALL_DATADIR}/bash-completion/completions" COMPONENT cli)
install(FILES "${REDLOCK_ZSH_COMPLETION}"
  DESTINATION "${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions" COMPONENT cli)
