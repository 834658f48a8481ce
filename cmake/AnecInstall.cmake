include(CMakePackageConfigHelpers)
install(EXPORT anecTargets NAMESPACE anec:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/anec)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/anecConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/anecConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/anec PATH_VARS CMAKE_INSTALL_DATADIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/anecConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/anecConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/anecConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/anec)
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/tables/ DESTINATION ${CMAKE_INSTALL_DATADIR}/anec/tables)
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

# pkg-config (anec.pc in <libdir>/pkgconfig): every library, dependents first. What the libraries
# link is in Requires.private; a static build (the default) puts it in Requires instead, as linking
# the archives needs it and `pkg-config --libs anec` (without --static) leaves Requires.private out.
# nlohmann_json is header-only and only the libraries' sources include it: no consumer needs it.
set(anec_pc_libs "")
foreach(lib firmware compiler descriptors hal decode layout support)
  string(APPEND anec_pc_libs " -lanec_${lib}")
endforeach()
string(STRIP "${anec_pc_libs}" anec_pc_libs)
set(anec_pc_deps "tomlplusplus libplist-2.0 zlib simdjson")
set(anec_pc_dl "")
foreach(lib ${CMAKE_DL_LIBS})
  string(APPEND anec_pc_dl " -l${lib}")
endforeach()
if(BUILD_SHARED_LIBS)
  set(anec_pc_requires Requires.private)
  set(anec_pc_libs_private "Libs.private:${anec_pc_dl}\n")
else()
  set(anec_pc_requires Requires)
  string(APPEND anec_pc_libs "${anec_pc_dl}")
  set(anec_pc_libs_private "")
endif()
file(RELATIVE_PATH anec_pc_to_prefix ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" anec_pc_to_prefix "${anec_pc_to_prefix}")
foreach(dir LIBDIR INCLUDEDIR DATADIR)
  string(TOLOWER ${dir} var)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(anec_pc_${var} "${CMAKE_INSTALL_${dir}}")
  else()
    set(anec_pc_${var} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/anec.pc.in ${CMAKE_CURRENT_BINARY_DIR}/anec.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/anec.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
