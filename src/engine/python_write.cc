// The writer helper's functions of awsglue._engine (write, glue_cast, conform, delete_prefix)
// are registered here; this placeholder registers none.
#include <pybind11/pybind11.h>

namespace openglue::engine {

void RegisterWriteFunctions(pybind11::module_& m) { (void)m; }

}  // namespace openglue::engine
