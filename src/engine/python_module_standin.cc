// STAND-IN (branch `writer` only): the module init of awsglue._engine belongs to helper `engine`,
// whose own init calls RegisterWriteFunctions. Dropped at merge.
#include <pybind11/pybind11.h>

#include "engine/python_write.h"

PYBIND11_MODULE(_engine, m) {
  m.doc() = "OpenGlue's embedded engine (writer stand-in module)";
  openglue::engine::RegisterWriteFunctions(m);
}
