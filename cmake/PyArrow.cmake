# Apache Arrow C++ from the pinned PyPI pyarrow wheel (see requirements.txt).
#
# The wheel ships the C++ headers (pyarrow/include) and shared libraries (libarrow.so.NNNN,
# libparquet.so.NNNN) built with the new C++11 ABI. We link those files by their full path and
# put the wheel's folder on the rpath, so the binaries find them at run time without
# LD_LIBRARY_PATH. Defines the imported targets pyarrow::arrow, pyarrow::arrow_compute,
# pyarrow::parquet and pyarrow::arrow_s3 (Arrow's S3 filesystem, a library of its own).
execute_process(
  COMMAND ${Python3_EXECUTABLE} -c
    "import pyarrow as pa; print(pa.__version__); print(pa.get_include()); print(pa.get_library_dirs()[0])"
  OUTPUT_VARIABLE _pyarrow_info
  RESULT_VARIABLE _pyarrow_rc
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _pyarrow_rc EQUAL 0)
  message(FATAL_ERROR "pyarrow is not importable by ${Python3_EXECUTABLE}; run `make deps`")
endif()
string(REPLACE "\n" ";" _pyarrow_info "${_pyarrow_info}")
list(GET _pyarrow_info 0 PYARROW_VERSION)
list(GET _pyarrow_info 1 PYARROW_INCLUDE_DIR)
list(GET _pyarrow_info 2 PYARROW_LIBRARY_DIR)
# The pin in requirements.txt is the version the code is written against; a different wheel
# would compile against other headers silently.
if(EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/requirements.txt")
  file(STRINGS "${CMAKE_CURRENT_SOURCE_DIR}/requirements.txt" _pyarrow_pin
       REGEX "^[ \t]*pyarrow[ \t]*==")
  if(_pyarrow_pin)
    string(REGEX REPLACE "^[ \t]*pyarrow[ \t]*==[ \t]*([^ \t#;]+).*$" "\\1" _pyarrow_pin
           "${_pyarrow_pin}")
    if(NOT _pyarrow_pin STREQUAL PYARROW_VERSION)
      message(FATAL_ERROR "requirements.txt pins pyarrow==${_pyarrow_pin} but "
                          "${Python3_EXECUTABLE} has pyarrow ${PYARROW_VERSION}")
    endif()
  endif()
endif()
# The libraries' SO version is ARROW_SO_VERSION from the wheel's own headers (major*100+minor,
# e.g. 2600 for 26.0.x, 2601 for 26.1.x); derive it there rather than from the version string.
file(STRINGS "${PYARROW_INCLUDE_DIR}/arrow/util/config.h" _so_version
     REGEX "^#define ARROW_SO_VERSION \"[0-9]+\"")
string(REGEX REPLACE "^.*\"([0-9]+)\".*$" "\\1" _so_version "${_so_version}")
if(NOT _so_version MATCHES "^[0-9]+$")
  message(FATAL_ERROR "ARROW_SO_VERSION not found in ${PYARROW_INCLUDE_DIR}/arrow/util/config.h")
endif()
message(STATUS
  "Arrow C++ from pyarrow ${PYARROW_VERSION} (so ${_so_version}): ${PYARROW_LIBRARY_DIR}")

foreach(lib arrow arrow_compute parquet arrow_s3)
  set(_path "${PYARROW_LIBRARY_DIR}/lib${lib}.so.${_so_version}")
  if(NOT EXISTS "${_path}")
    message(FATAL_ERROR "${_path} not found in the pyarrow wheel")
  endif()
  add_library(pyarrow::${lib} SHARED IMPORTED GLOBAL)
  set_target_properties(pyarrow::${lib} PROPERTIES
    IMPORTED_LOCATION "${_path}"
    IMPORTED_NO_SONAME FALSE
    INTERFACE_INCLUDE_DIRECTORIES "${PYARROW_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS "_GLIBCXX_USE_CXX11_ABI=1")
endforeach()
set_property(TARGET pyarrow::parquet APPEND PROPERTY INTERFACE_LINK_LIBRARIES pyarrow::arrow)
set_property(TARGET pyarrow::arrow_compute APPEND PROPERTY INTERFACE_LINK_LIBRARIES pyarrow::arrow)
set_property(TARGET pyarrow::arrow_s3 APPEND PROPERTY INTERFACE_LINK_LIBRARIES pyarrow::arrow)
# Binaries find the wheel's libraries through their rpath (an absolute path into the wheel's
# folder: binaries must be rebuilt if that Python environment moves or is recreated).
list(APPEND CMAKE_BUILD_RPATH "${PYARROW_LIBRARY_DIR}")
list(APPEND CMAKE_INSTALL_RPATH "${PYARROW_LIBRARY_DIR}")

# Arrow's S3 filesystem (storage/s3_object_store.cc): pyarrow >= 22 ships it as its own library,
# libarrow_s3.so.NNNN, on top of libarrow.
if(NOT TARGET pyarrow::arrow_s3)
  set(_path "${PYARROW_LIBRARY_DIR}/libarrow_s3.so.${_so_version}")
  if(NOT EXISTS "${_path}")
    message(FATAL_ERROR "${_path} not found in the pyarrow wheel")
  endif()
  add_library(pyarrow::arrow_s3 SHARED IMPORTED GLOBAL)
  set_target_properties(pyarrow::arrow_s3 PROPERTIES
    IMPORTED_LOCATION "${_path}"
    IMPORTED_NO_SONAME FALSE
    INTERFACE_LINK_LIBRARIES pyarrow::arrow)
endif()
