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
