option(ANEC_BUILD_FUZZERS "Build libFuzzer targets (needs clang); instruments every target" OFF)
# A fuzz build instruments the whole tree for coverage, so its tests and benchmarks would measure
# instrumented code: they default to OFF there.
if(ANEC_BUILD_FUZZERS)
  set(anec_default_suites OFF)
else()
  set(anec_default_suites ON)
endif()
option(ANEC_BUILD_TESTS "Build the GoogleTest suites" ${anec_default_suites})
option(ANEC_BUILD_BENCHMARKS "Build the Google Benchmark harnesses" ${anec_default_suites})
option(ANEC_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
# Off by default so that a consumer's build with another compiler or version is not stopped by a new
# warning; CI turns it on (.ci/run configures the README test command's build folder with it first).
option(ANEC_WERROR "Treat warnings as errors" OFF)

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()

add_library(anec_warnings INTERFACE)
target_compile_options(anec_warnings INTERFACE -Wall -Wextra -Wpedantic $<$<BOOL:${ANEC_WERROR}>:-Werror>)
# GCC 12 and later report a false -Wrestrict inside libstdc++'s std::string (replace/insert inlined
# at -O3, i.e. in Release builds): GCC bugs 105329 and 105651. At -O3 GCC 12 also reports a false
# -Wstringop-overflow for a store through a std::span into a vector whose size it cannot see (the
# tests' byte patches). Keep both warnings, not errors.
if(ANEC_WERROR AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12)
  target_compile_options(anec_warnings INTERFACE -Wno-error=restrict -Wno-error=stringop-overflow)
endif()

if(ANEC_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# Fuzzing: every target (the libraries, the tools, the harnesses) is compiled with coverage feedback
# and ASan+UBSan, so libFuzzer sees the parsers in the libraries, not only the harness files. Only
# the harnesses link libFuzzer itself (-fsanitize=fuzzer, fuzz/CMakeLists.txt); the tools keep their
# main() and link the sanitizer runtimes, which also provide the coverage callbacks.
if(ANEC_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ANEC_BUILD_FUZZERS needs clang (libFuzzer): configure with CXX=clang++")
  endif()
  if(ANEC_BUILD_BENCHMARKS)
    message(WARNING "ANEC_BUILD_BENCHMARKS with ANEC_BUILD_FUZZERS: the benchmarks time instrumented code")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
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

# anec_module(NAME SOURCES...) — a module loaded on first use (anec/support/plugin.hpp): linked by
# nothing, built into ANEC_PLUGIN_BUILD_DIR as NAME.so and installed to <libdir>/anec. Only its entry
# function is exported.
function(anec_module name)
  add_library(${name} MODULE ${ARGN})
  set_target_properties(${name} PROPERTIES PREFIX "" SUFFIX ".so"
                        LIBRARY_OUTPUT_DIRECTORY ${ANEC_PLUGIN_BUILD_DIR}
                        CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_link_libraries(${name} PRIVATE anec_warnings)
  install(TARGETS ${name} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/anec)
endfunction()
