// openglue_runtime.engines.embedded._engine: the engine's Python module (pybind11). Tables cross into Python through the
// Arrow C stream interface: scans return small objects implementing __arrow_c_stream__ /
// __arrow_c_schema__, and stream arguments accept any object implementing __arrow_c_stream__.
// Every call releases the GIL while the engine works; failures raise EngineError.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <arrow/c/abi.h>
#include <arrow/c/bridge.h>
#include <arrow/compute/initialize.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "engine/scan.h"
#include "storage/arrow_fs.h"

namespace py = pybind11;

namespace openglue::engine {

void RegisterWriteFunctions(pybind11::module_& m);

namespace {

py::object& EngineErrorType() {
  static py::object* type = nullptr;  // owned by the module for the process's life
  if (type == nullptr) type = new py::object();
  return *type;
}

[[noreturn]] void Raise(const Status& status) {
  PyErr_SetString(EngineErrorType().ptr(), status.message().c_str());
  throw py::error_already_set();
}

template <typename T>
T Unwrap(Result<T> result) {
  if (!result.ok()) Raise(result.status());
  return std::move(result).value();
}

// ---- capsules -------------------------------------------------------------------------------

void ReleaseSchemaCapsule(PyObject* capsule) {
  auto* schema = static_cast<ArrowSchema*>(PyCapsule_GetPointer(capsule, "arrow_schema"));
  if (schema == nullptr) {
    PyErr_Clear();
    return;
  }
  if (schema->release != nullptr) schema->release(schema);
  delete schema;
}

void ReleaseStreamCapsule(PyObject* capsule) {
  auto* stream = static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule, "arrow_array_stream"));
  if (stream == nullptr) {
    PyErr_Clear();
    return;
  }
  if (stream->release != nullptr) stream->release(stream);
  delete stream;
}

// A schema handed to Python.
class PySchema {
 public:
  explicit PySchema(std::shared_ptr<arrow::Schema> schema) : schema_(std::move(schema)) {}
  py::object ArrowCSchema() const {
    auto* c_schema = new ArrowSchema();
    c_schema->release = nullptr;
    auto st = arrow::ExportSchema(*schema_, c_schema);
    if (!st.ok()) {
      delete c_schema;
      Raise(Status::Internal("exporting a schema: " + st.ToString()));
    }
    return py::reinterpret_steal<py::object>(
        PyCapsule_New(c_schema, "arrow_schema", ReleaseSchemaCapsule));
  }
  std::string Repr() const { return "<openglue_runtime.engines.embedded._engine.Schema " + schema_->ToString() + ">"; }
  const std::shared_ptr<arrow::Schema>& schema() const { return schema_; }

 private:
  std::shared_ptr<arrow::Schema> schema_;
};

// A stream handed to Python: consumed once by __arrow_c_stream__.
class PyStream {
 public:
  explicit PyStream(std::shared_ptr<arrow::RecordBatchReader> reader) : reader_(std::move(reader)) {}
  py::object ArrowCStream(py::object requested_schema) {
    if (!reader_) Raise(Status::InvalidInput("this stream was already consumed"));
    auto* c_stream = new ArrowArrayStream();
    c_stream->release = nullptr;
    auto st = arrow::ExportRecordBatchReader(std::move(reader_), c_stream);
    reader_.reset();
    if (!st.ok()) {
      delete c_stream;
      Raise(Status::Internal("exporting a stream: " + st.ToString()));
    }
    return py::reinterpret_steal<py::object>(
        PyCapsule_New(c_stream, "arrow_array_stream", ReleaseStreamCapsule));
  }
  PySchema Schema() const {
    if (!reader_) Raise(Status::InvalidInput("this stream was already consumed"));
    return PySchema(reader_->schema());
  }

 private:
  std::shared_ptr<arrow::RecordBatchReader> reader_;
};

}  // namespace

// Used by the writer's functions too: any object with __arrow_c_stream__ / __arrow_c_schema__.
std::shared_ptr<arrow::RecordBatchReader> ImportStream(const py::object& obj) {
  if (!py::hasattr(obj, "__arrow_c_stream__")) {
    Raise(Status::InvalidInput("expected an object with __arrow_c_stream__ (a pyarrow Table or "
                               "RecordBatchReader)"));
  }
  py::object capsule = obj.attr("__arrow_c_stream__")();
  auto* c_stream =
      static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule.ptr(), "arrow_array_stream"));
  if (c_stream == nullptr) throw py::error_already_set();
  auto reader = arrow::ImportRecordBatchReader(c_stream);  // moves the stream out
  if (!reader.ok()) Raise(Status::InvalidInput("importing a stream: " + reader.status().ToString()));
  return *reader;
}

std::shared_ptr<arrow::Schema> ImportSchema(const py::object& obj) {
  if (py::isinstance<PySchema>(obj)) return obj.cast<const PySchema&>().schema();
  if (!py::hasattr(obj, "__arrow_c_schema__")) {
    Raise(Status::InvalidInput("expected an object with __arrow_c_schema__ (a pyarrow Schema)"));
  }
  py::object capsule = obj.attr("__arrow_c_schema__")();
  auto* c_schema = static_cast<ArrowSchema*>(PyCapsule_GetPointer(capsule.ptr(), "arrow_schema"));
  if (c_schema == nullptr) throw py::error_already_set();
  // ImportSchema moves the schema out of the struct; the capsule's destructor then sees it
  // released. The capsule's own struct is not ours to free.
  ArrowSchema moved;
  std::memcpy(&moved, c_schema, sizeof(moved));
  c_schema->release = nullptr;
  auto schema = arrow::ImportSchema(&moved);
  if (!schema.ok()) Raise(Status::InvalidInput("importing a schema: " + schema.status().ToString()));
  return *schema;
}

namespace {

// Scan as seen from Python.
class PyScan {
 public:
  explicit PyScan(std::unique_ptr<Scan> scan) : scan_(std::move(scan)) {}
  PySchema Schema() {
    Result<std::shared_ptr<arrow::Schema>> result = Status::Internal("unset");
    {
      py::gil_scoped_release release;
      result = scan_->Schema();
    }
    return PySchema(Unwrap(std::move(result)));
  }
  PySchema RawSchema() {
    Result<std::shared_ptr<arrow::Schema>> result = Status::Internal("unset");
    {
      py::gil_scoped_release release;
      result = scan_->RawSchema();
    }
    return PySchema(Unwrap(std::move(result)));
  }
  PyStream Stream(py::object schema, int64_t batch_rows) {
    std::shared_ptr<arrow::Schema> target;
    if (!schema.is_none()) target = ImportSchema(schema);
    Result<std::shared_ptr<arrow::RecordBatchReader>> result = Status::Internal("unset");
    {
      py::gil_scoped_release release;
      result = scan_->Stream(target, batch_rows);
    }
    return PyStream(Unwrap(std::move(result)));
  }
  std::vector<std::string> TextLosses(py::object schema) {
    std::shared_ptr<arrow::Schema> declared = ImportSchema(schema);
    Result<std::vector<std::string>> result = Status::Internal("unset");
    {
      py::gil_scoped_release release;
      result = scan_->TextLosses(declared);
    }
    return Unwrap(std::move(result));
  }
  // [{"source", "line", "message", "input"}] of the records the streams skipped (Scan::BadRecords).
  py::list BadRecords() {
    py::list out;
    for (const BadRecord& bad : scan_->BadRecords()) {
      py::dict d;
      d["source"] = bad.source;
      d["line"] = bad.line;
      d["message"] = py::reinterpret_steal<py::str>(
          PyUnicode_DecodeUTF8(bad.message.data(), bad.message.size(), "replace"));
      d["input"] = py::reinterpret_steal<py::str>(
          PyUnicode_DecodeUTF8(bad.input.data(), bad.input.size(), "replace"));
      out.append(std::move(d));
    }
    return out;
  }

 private:
  std::unique_ptr<Scan> scan_;
};

}  // namespace
}  // namespace openglue::engine

PYBIND11_MODULE(_engine, m) {
  using namespace openglue::engine;
  m.doc() = "OpenGlue's embedded engine (C++ on Apache Arrow)";
  {
    auto st = arrow::compute::Initialize();
    if (!st.ok()) throw std::runtime_error("arrow compute: " + st.ToString());
  }
  EngineErrorType() = py::reinterpret_steal<py::object>(
      PyErr_NewExceptionWithDoc("openglue_runtime.engines.embedded._engine.EngineError",
                                "An engine failure; the message names the file and the problem.",
                                PyExc_RuntimeError, nullptr));
  m.attr("EngineError") = EngineErrorType();

  py::class_<PySchema>(m, "Schema")
      .def("__arrow_c_schema__", &PySchema::ArrowCSchema)
      .def("__repr__", &PySchema::Repr);
  py::class_<PyStream>(m, "Stream")
      .def("__arrow_c_stream__", &PyStream::ArrowCStream, py::arg("requested_schema") = py::none())
      .def_property_readonly("schema", &PyStream::Schema);
  py::class_<PyScan>(m, "Scan")
      .def("schema", &PyScan::Schema)
      .def("raw_schema", &PyScan::RawSchema)
      .def("stream", &PyScan::Stream, py::arg("schema") = py::none(),
           py::arg("batch_rows") = 65536)
      .def("text_losses", &PyScan::TextLosses, py::arg("schema"))
      .def("bad_records", &PyScan::BadRecords);

  m.def(
      "list_files",
      [](const std::vector<std::string>& paths, const std::map<std::string, std::string>& options,
         const std::map<std::string, std::string>& storage) {
        auto storage_options = openglue::storage::FromMap(storage);
        openglue::Result<std::vector<ListedFile>> result = openglue::Status::Internal("unset");
        {
          py::gil_scoped_release release;
          result = ListFiles(paths, options, storage_options);
        }
        std::vector<std::tuple<std::string, int64_t, int64_t>> out;
        for (const auto& f : Unwrap(std::move(result))) out.emplace_back(f.uri, f.size, f.mtime_ms);
        return out;
      },
      py::arg("paths"), py::arg("options") = std::map<std::string, std::string>{},
      py::arg("storage") = std::map<std::string, std::string>{},
      "list_files(paths, options, storage) -> [(uri, size, mtime_ms)]");
  m.def(
      "scan",
      [](const std::vector<std::string>& files, const std::string& format,
         const std::map<std::string, std::string>& options,
         const std::map<std::string, std::string>& storage) {
        return PyScan(Unwrap(Scan::Make(files, format, options, openglue::storage::FromMap(storage))));
      },
      py::arg("files"), py::arg("format"), py::arg("options") = std::map<std::string, std::string>{},
      py::arg("storage") = std::map<std::string, std::string>{},
      "scan(files, format, options, storage) -> Scan");
  RegisterWriteFunctions(m);
}
