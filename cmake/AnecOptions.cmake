option(ANEC_BUILD_TESTS "Build the GoogleTest suites" ON)
option(ANEC_BUILD_BENCHMARKS "Build the Google Benchmark harnesses" ON)
option(ANEC_BUILD_FUZZERS "Build libFuzzer targets (needs clang)" OFF)
option(ANEC_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(ANEC_WERROR "Treat warnings as errors" ON)

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()

add_library(anec_warnings INTERFACE)
target_compile_options(anec_warnings INTERFACE -Wall -Wextra -Wpedantic $<$<BOOL:${ANEC_WERROR}>:-Werror>)

if(ANEC_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# anec_library(NAME SOURCES...) — one library per folder, headers under <dir>/include/anec/<dir>/.
function(anec_library name)
  add_library(anec_${name} ${ARGN})
  add_library(anec::${name} ALIAS anec_${name})
  set_target_properties(anec_${name} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME anec_${name}
                        POSITION_INDEPENDENT_CODE ON)
  target_include_directories(anec_${name} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(anec_${name} PRIVATE $<BUILD_INTERFACE:anec_warnings>)
  install(TARGETS anec_${name} EXPORT anecTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()
