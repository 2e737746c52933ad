// Registers the writer's functions (write, glue_cast, conform, delete_prefix) and, when the
// module has none yet, _engine.EngineError, on the openglue_runtime.engines.embedded._engine module. Called from the
// module's PYBIND11_MODULE init. See python_write.cc.
#pragma once

namespace pybind11 {
class module_;
}

namespace openglue::engine {
void RegisterWriteFunctions(pybind11::module_& m);
}
