# Installs the build tree into a scratch prefix, then configures, builds and installs tests/install
# into that prefix and runs it from there: without being told, it finds the prefix's tables, loads a
# target table and checks a model on it; `--tables` overrides; then it extracts a table from BINARY
# through the installed decode module, found beside it too (the scratch prefix is not the one the
# build was configured for). A second consumer is compiled and linked with pkg-config alone, an
# installed tool is run, and (when the build has the Python module) the installed Python package is
# imported from the prefix and used (python_consumer.py).
file(REMOVE_RECURSE ${WORK_DIR})
macro(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endmacro()
function(expect regex)
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "unexpected output (wanted ${regex}):\n${out}")
  endif()
endfunction()
set(prefix ${WORK_DIR}/prefix)
# Nothing from the caller's environment says where anything is.
set(clean ${CMAKE_COMMAND} -E env --unset=ANEC_TABLES --unset=ANEC_COMPILED_TABLES --unset=ANEC_PLUGIN_DIR)
step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
file(GLOB_RECURSE modules ${prefix}/*/anec/anec_*_backend*.so)
list(LENGTH modules count)
if(NOT count EQUAL 4)
  message(FATAL_ERROR "the install holds ${count} of the 4 modules: ${modules}")
endif()
foreach(file bin/anec bin/anec-hal bin/anec-desc bin/anec-fw share/anec/tables/schema/hal.toml
             share/anec/tables/targets/h16.toml)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "the install has no ${file}")
  endif()
endforeach()
file(GLOB_RECURSE config_version ${prefix}/*/cmake/anec/anecConfigVersion.cmake)
file(GLOB_RECURSE pc ${prefix}/*/pkgconfig/anec.pc)
if(NOT config_version OR NOT pc)
  message(FATAL_ERROR "the install has no anecConfigVersion.cmake or no anec.pc")
endif()

step(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix}
     -DCMAKE_INSTALL_PREFIX=${prefix} -DCMAKE_BUILD_TYPE=Release)
step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step(${CMAKE_COMMAND} --install ${WORK_DIR}/build)
step(${clean} ${prefix}/bin/anec-consumer)
message(STATUS "${out}")
expect("^tables: ${prefix}/[^\n]*/anec/tables\ncheck on h16: native, 2 ops\n")
expect("\n28 targets; m1 -> h13 with 4 NE cores\n")
step(${clean} ${prefix}/bin/anec-consumer --tables ${TABLES_DIR})
expect("^tables: ${TABLES_DIR}\n")
step(${clean} ${prefix}/bin/anec-consumer ${BINARY})
expect("\nmodules: ${prefix}/lib/anec\nextracted 1 table\\(s\\): h13")

# pkg-config alone: the flags of anec.pc, relocated with the prefix.
get_filename_component(pc_dir ${pc} DIRECTORY)
step(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pc_dir} ${PKG_CONFIG} --cflags --libs anec)
string(STRIP "${out}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
step(${CXX} -std=c++20 ${SOURCE_DIR}/pkg_config_consumer.cpp ${flags} -o ${prefix}/bin/anec-pc-consumer)
step(${clean} ${prefix}/bin/anec-pc-consumer)
message(STATUS "${out}")
expect("^pkg-config consumer: ${prefix}/[^\n]*/anec/tables, m1 -> h13 with 4 NE cores\n")

# The installed tools read the installed tables; --tables still overrides.
step(${clean} ${prefix}/bin/anec-hal show h16)
execute_process(COMMAND ${clean} ${prefix}/bin/anec-hal --tables ${WORK_DIR}/none show h16
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "anec-hal --tables ${WORK_DIR}/none exits ${rc}, not 2")
endif()

# The installed Python package, from the prefix alone: it finds the prefix's tables and modules.
if(PYTHON)
  foreach(file __init__.py __init__.pyi fw.py fw.pyi _program.py py.typed _installed.py)
    if(NOT EXISTS ${prefix}/${PYTHON_DIR}/anec/${file})
      message(FATAL_ERROR "the install has no ${PYTHON_DIR}/anec/${file}")
    endif()
  endforeach()
  execute_process(COMMAND ${clean} --unset=PYTHONPATH PYTHONPATH=${prefix}/${PYTHON_DIR}
                          PYTHONDONTWRITEBYTECODE=1 ${PYTHON} ${SOURCE_DIR}/python_consumer.py ${prefix}
                          ${TABLES_DIR} ${PROGRAM}
                  WORKING_DIRECTORY ${WORK_DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "the Python consumer failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
  expect("^package: ${prefix}/${PYTHON_DIR}/anec\n")
  expect("\ntables: ${prefix}/[^\n]*/anec/tables\nmodules: ${prefix}/lib/anec\n")
  expect("\n28 targets; m1 -> h13; check on h16: native\n")
  expect("\nonnx: (native|not installed)\n")
  if(PROGRAM)
    expect("\nprogram: hwx, [1-9][0-9]* descriptor\\(s\\), round trip identical\n")
  endif()
  expect("\nfw: accept\nset_tables: ${TABLES_DIR}\nANEC_TABLES: ${TABLES_DIR}\n$")
endif()
