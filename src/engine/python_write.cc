// The writer's part of the Python module openglue_runtime.engines.embedded._engine: write, glue_cast, conform and
// delete_prefix (CONTRACT.md). Tables cross through the Arrow C data/stream interface (PyCapsules
// named "arrow_schema", "arrow_array", "arrow_array_stream"), so no data is copied at the border.
// Every call releases the GIL while it works; errors are raised as _engine.EngineError.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <arrow/buffer.h>
#include <arrow/c/abi.h>
#include <arrow/filesystem/filesystem.h>
#include <arrow/io/interfaces.h>
#include <arrow/c/bridge.h>
#include <arrow/array.h>
#include <arrow/chunked_array.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>

#include "engine/glue_cast.h"
#include "engine/python_write.h"
#include "engine/writer.h"
#include "storage/arrow_fs.h"

namespace py = pybind11;

namespace openglue::engine {
namespace {

py::object& EngineErrorType() {
  static py::object* type = nullptr;  // leaked on purpose: outlives interpreter teardown order
  if (type == nullptr) type = new py::object();
  return *type;
}

[[noreturn]] void Raise(const std::string& message) {
  PyErr_SetString(EngineErrorType().ptr(), message.c_str());
  throw py::error_already_set();
}

template <typename T>
T Check(Result<T> result) {
  if (!result.ok()) Raise(result.status().message());
  return std::move(result).value();
}

void CheckArrow(const arrow::Status& status, const char* what) {
  if (!status.ok()) Raise(std::string(what) + ": " + status.ToString());
}

void ReleaseSchemaCapsule(PyObject* capsule) {
  auto* schema = static_cast<ArrowSchema*>(PyCapsule_GetPointer(capsule, "arrow_schema"));
  if (schema == nullptr) { PyErr_Clear(); return; }
  if (schema->release != nullptr) schema->release(schema);
  delete schema;
}
void ReleaseArrayCapsule(PyObject* capsule) {
  auto* array = static_cast<ArrowArray*>(PyCapsule_GetPointer(capsule, "arrow_array"));
  if (array == nullptr) { PyErr_Clear(); return; }
  if (array->release != nullptr) array->release(array);
  delete array;
}
void ReleaseStreamCapsule(PyObject* capsule) {
  auto* stream = static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule, "arrow_array_stream"));
  if (stream == nullptr) { PyErr_Clear(); return; }
  if (stream->release != nullptr) stream->release(stream);
  delete stream;
}

py::object Capsule(void* pointer, const char* name, PyCapsule_Destructor destructor) {
  PyObject* capsule = PyCapsule_New(pointer, name, destructor);
  if (capsule == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(capsule);
}

py::object ExportSchemaCapsule(const arrow::DataType& type) {
  auto* schema = new ArrowSchema;
  arrow::Status st = arrow::ExportType(type, schema);
  if (!st.ok()) { delete schema; CheckArrow(st, "export schema"); }
  return Capsule(schema, "arrow_schema", ReleaseSchemaCapsule);
}

// A stream handed to Python once (pyarrow.RecordBatchReader.from_stream(obj)).
class StreamObject {
 public:
  explicit StreamObject(std::shared_ptr<arrow::RecordBatchReader> reader) : reader_(std::move(reader)) {}
  explicit StreamObject(std::shared_ptr<arrow::ChunkedArray> chunks) : chunks_(std::move(chunks)) {}
  py::object ArrowCStream(py::object requested_schema) {
    if (reader_ == nullptr && chunks_ == nullptr) Raise("this stream was already consumed");
    auto* stream = new ArrowArrayStream;
    arrow::Status st = reader_ ? arrow::ExportRecordBatchReader(reader_, stream)
                               : arrow::ExportChunkedArray(chunks_, stream);
    if (!st.ok()) { delete stream; CheckArrow(st, "export stream"); }
    reader_.reset();
    chunks_.reset();
    return Capsule(stream, "arrow_array_stream", ReleaseStreamCapsule);
  }

 private:
  std::shared_ptr<arrow::RecordBatchReader> reader_;
  std::shared_ptr<arrow::ChunkedArray> chunks_;
};

class ArrayObject {
 public:
  explicit ArrayObject(std::shared_ptr<arrow::Array> array) : array_(std::move(array)) {}
  py::tuple ArrowCArray(py::object requested_schema) {
    py::object schema = ExportSchemaCapsule(*array_->type());
    auto* array = new ArrowArray;
    arrow::Status st = arrow::ExportArray(*array_, array);
    if (!st.ok()) { delete array; CheckArrow(st, "export array"); }
    return py::make_tuple(schema, Capsule(array, "arrow_array", ReleaseArrayCapsule));
  }
  py::object ArrowCSchema() { return ExportSchemaCapsule(*array_->type()); }

 private:
  std::shared_ptr<arrow::Array> array_;
};

class SchemaObject {
 public:
  explicit SchemaObject(std::shared_ptr<arrow::DataType> type) : type_(std::move(type)) {}
  py::object ArrowCSchema() { return ExportSchemaCapsule(*type_); }

 private:
  std::shared_ptr<arrow::DataType> type_;
};

std::shared_ptr<arrow::DataType> ImportTargetType(const py::object& target) {
  if (!py::hasattr(target, "__arrow_c_schema__"))
    throw py::type_error("the target must be a pyarrow schema, field or type (__arrow_c_schema__)");
  py::object capsule = target.attr("__arrow_c_schema__")();
  auto* schema = static_cast<ArrowSchema*>(PyCapsule_GetPointer(capsule.ptr(), "arrow_schema"));
  if (schema == nullptr) throw py::error_already_set();
  auto type = arrow::ImportType(schema);
  CheckArrow(type.status(), "import target type");
  return *type;
}

std::shared_ptr<arrow::Schema> StructToSchema(const std::shared_ptr<arrow::DataType>& type) {
  if (type->id() != arrow::Type::STRUCT)
    throw py::type_error("a schema (struct type) is needed here, got " + type->ToString());
  return arrow::schema(type->fields());
}

py::object StreamCapsule(const py::object& obj) {
  if (!py::hasattr(obj, "__arrow_c_stream__"))
    throw py::type_error("expected a table or stream (an object with __arrow_c_stream__)");
  return obj.attr("__arrow_c_stream__")();
}

ArrowArrayStream* StreamPointer(const py::object& capsule) {
  auto* stream = static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule.ptr(), "arrow_array_stream"));
  if (stream == nullptr) throw py::error_already_set();
  return stream;
}

std::shared_ptr<arrow::RecordBatchReader> ImportStream(const py::object& obj) {
  py::object capsule = StreamCapsule(obj);
  auto reader = arrow::ImportRecordBatchReader(StreamPointer(capsule));
  CheckArrow(reader.status(), "import stream");
  return *reader;
}

std::map<std::string, std::string> StringMap(const py::object& obj) {
  std::map<std::string, std::string> out;
  if (obj.is_none()) return out;
  for (auto item : py::dict(obj)) {
    py::object value = py::reinterpret_borrow<py::object>(item.second);
    std::string text;
    if (value.is_none()) continue;
    if (py::isinstance<py::bool_>(value)) text = value.cast<bool>() ? "true" : "false";
    else text = py::str(value).cast<std::string>();
    out[py::str(item.first).cast<std::string>()] = text;
  }
  return out;
}

// The whole object or file at `uri` (the formats the Python layer reads itself: XML, Avro). A
// file larger than `max_bytes` is refused, naming it.
py::bytes ReadBytes(const std::string& uri, const py::object& storage_map, int64_t max_bytes) {
  std::shared_ptr<arrow::Buffer> buffer;
  std::string error;
  const auto options = storage::FromMap(StringMap(storage_map));  // with the GIL
  {
    py::gil_scoped_release release;
    auto resolved = storage::ResolveArrowPath(uri, options);
    if (!resolved.ok()) {
      error = resolved.status().message();
    } else {
      auto info = resolved->fs->GetFileInfo(resolved->path);
      if (!info.ok() || info->type() != arrow::fs::FileType::File) {
        error = uri + ": no such file";
      } else if (info->size() > max_bytes) {
        error = uri + ": " + std::to_string(info->size()) + " bytes, more than the " +
                std::to_string(max_bytes) + " this format reads at once";
      } else {
        auto input = resolved->fs->OpenInputStream(resolved->path);
        auto read = input.ok() ? (*input)->Read(info->size()) : input.status();
        if (read.ok()) {
          buffer = *read;
        } else {
          error = uri + ": read failed: " + read.status().ToString();
        }
      }
    }
  }
  if (!error.empty()) Raise(error);
  return py::bytes(reinterpret_cast<const char*>(buffer->data()), buffer->size());
}

// `data` as the file or object at `uri`, written under a hidden name and renamed when complete
// (objects are written in one request), as the writer publishes its files.
void WriteBytes(const std::string& uri, const py::bytes& data, const py::object& storage_map) {
  std::string_view view(data);
  std::string error;
  const auto options = storage::FromMap(StringMap(storage_map));  // with the GIL
  {
    py::gil_scoped_release release;
    auto resolved = storage::ResolveArrowPath(uri, options);
    if (!resolved.ok()) {
      error = resolved.status().message();
    } else {
      std::string path = resolved->path;
      std::string temp = path;
      if (!resolved->is_object_store) {
        size_t slash = path.rfind('/');
        std::string parent = slash == std::string::npos ? "" : path.substr(0, slash);
        temp = (parent.empty() ? "" : parent + "/") + ".og-tmp." + path.substr(slash + 1);
        if (!parent.empty()) {
          auto created = resolved->fs->CreateDir(parent, /*recursive=*/true);
          if (!created.ok()) error = uri + ": create the folder: " + created.ToString();
        }
      }
      if (error.empty()) {
        auto out = resolved->fs->OpenOutputStream(temp);
        arrow::Status st = out.ok() ? (*out)->Write(view.data(), static_cast<int64_t>(view.size()))
                                    : out.status();
        if (st.ok()) st = (*out)->Close();
        if (st.ok() && temp != path) st = resolved->fs->Move(temp, path);
        if (!st.ok()) {
          if (temp != path) (void)resolved->fs->DeleteFile(temp);
          error = uri + ": write failed: " + st.ToString();
        }
      }
    }
  }
  if (!error.empty()) Raise(error);
}

}  // namespace

void RegisterWriteFunctions(py::module_& m) {
  if (py::hasattr(m, "EngineError")) {
    EngineErrorType() = m.attr("EngineError");
  } else {
    PyObject* type = PyErr_NewException("openglue_runtime.engines.embedded._engine.EngineError", PyExc_RuntimeError, nullptr);
    if (type == nullptr) throw py::error_already_set();
    EngineErrorType() = py::reinterpret_steal<py::object>(type);
    m.attr("EngineError") = EngineErrorType();
  }

  // S3 is shut down from Python's atexit (before interpreter teardown), as pyarrow does.
  m.def("_finalize_s3", [] {
    py::gil_scoped_release release;
    storage::FinalizeArrowS3();
  });
  py::module_::import("atexit").attr("register")(m.attr("_finalize_s3"));

  m.def("read_bytes", &ReadBytes, py::arg("uri"), py::arg("storage") = py::none(),
        py::arg("max_bytes") = int64_t{1} << 31,
        "read_bytes(uri, storage, max_bytes) -> bytes: a whole file or object");
  m.def("write_bytes", &WriteBytes, py::arg("uri"), py::arg("data"), py::arg("storage") = py::none(),
        "write_bytes(uri, data, storage): a whole file or object, published when complete");
  py::class_<StreamObject>(m, "_WriterStream")
      .def("__arrow_c_stream__", &StreamObject::ArrowCStream, py::arg("requested_schema") = py::none());
  py::class_<ArrayObject>(m, "_WriterArray")
      .def("__arrow_c_array__", &ArrayObject::ArrowCArray, py::arg("requested_schema") = py::none())
      .def("__arrow_c_schema__", &ArrayObject::ArrowCSchema);
  py::class_<SchemaObject>(m, "_WriterSchema").def("__arrow_c_schema__", &SchemaObject::ArrowCSchema);

  m.def(
      "write",
      [](py::object stream, const std::string& path, const std::string& format, py::object options,
         std::vector<std::string> partition_keys, py::object storage) {
        auto reader = ImportStream(stream);
        auto opts = StringMap(options);
        auto store = storage::StorageOptions::FromMap(StringMap(storage));
        Result<std::vector<std::string>> result = Status::Internal("not run");
        {
          py::gil_scoped_release release;
          result = Write(reader, path, format, opts, partition_keys, store);
        }
        return Check(std::move(result));
      },
      py::arg("stream"), py::arg("path"), py::arg("format"), py::arg("options") = py::dict(),
      py::arg("partition_keys") = std::vector<std::string>(), py::arg("storage") = py::dict(),
      "Writes a stream (any __arrow_c_stream__ object) under path; returns the uris written.");

  m.def(
      "glue_cast",
      [](py::object obj, py::object target) -> py::object {
        auto type = ImportTargetType(target);
        if (py::hasattr(obj, "__arrow_c_array__")) {
          py::tuple pair = obj.attr("__arrow_c_array__")();
          auto* schema = static_cast<ArrowSchema*>(PyCapsule_GetPointer(pair[0].ptr(), "arrow_schema"));
          auto* array = static_cast<ArrowArray*>(PyCapsule_GetPointer(pair[1].ptr(), "arrow_array"));
          if (schema == nullptr || array == nullptr) throw py::error_already_set();
          auto imported = arrow::ImportArray(array, schema);
          CheckArrow(imported.status(), "import array");
          Result<std::shared_ptr<arrow::Array>> result = Status::Internal("not run");
          {
            py::gil_scoped_release release;
            result = GlueCast(*imported, type);
          }
          return py::cast(ArrayObject(Check(std::move(result))));
        }
        py::object capsule = StreamCapsule(obj);
        if (type->id() == arrow::Type::STRUCT) {
          auto reader = arrow::ImportRecordBatchReader(StreamPointer(capsule));
          CheckArrow(reader.status(), "import stream");
          return py::cast(StreamObject(ConformReader(*reader, StructToSchema(type))));
        }
        auto chunks = arrow::ImportChunkedArray(StreamPointer(capsule));
        CheckArrow(chunks.status(), "import stream");
        arrow::ArrayVector out;
        {
          py::gil_scoped_release release;
          for (const auto& chunk : (*chunks)->chunks()) {
            auto cast = GlueCast(chunk, type);
            if (!cast.ok()) {
              py::gil_scoped_acquire acquire;
              Raise(cast.status().message());
            }
            out.push_back(*cast);
          }
        }
        auto result = arrow::ChunkedArray::Make(out, type);
        CheckArrow(result.status(), "chunked array");
        return py::cast(StreamObject(*result));
      },
      py::arg("obj"), py::arg("target"),
      "Glue's cast of an array/record batch (__arrow_c_array__: returns an __arrow_c_array__ "
      "object) or a table/stream (__arrow_c_stream__: returns a stream) to a type or schema.");

  m.def(
      "conform",
      [](py::object stream, py::object schema) {
        auto type = ImportTargetType(schema);
        return StreamObject(ConformReader(ImportStream(stream), StructToSchema(type)));
      },
      py::arg("stream"), py::arg("schema"),
      "A stream of the input's batches shaped as schema (fields by name, missing ones null, each cast).");

  m.def(
      "delete_prefix",
      [](const std::string& path, py::object storage, std::optional<int64_t> older_than_ms,
         py::object exclusions) {
        auto store = storage::StorageOptions::FromMap(StringMap(storage));
        // Glue passes exclusions as a JSON list in a string; a Python list is taken as well.
        std::vector<std::string> globs;
        if (py::isinstance<py::str>(exclusions)) {
          std::string text = exclusions.cast<std::string>();
          if (!text.empty()) {
            py::object parsed;
            try {
              parsed = py::module_::import("json").attr("loads")(text);
            } catch (py::error_already_set&) {
              Raise("exclusions must be a JSON list of globs, got " + text.substr(0, 200));
            }
            exclusions = parsed;
          }
        }
        if (!exclusions.is_none() && !py::isinstance<py::str>(exclusions)) {
          for (auto item : py::iter(exclusions)) globs.push_back(py::str(item).cast<std::string>());
        }
        Result<std::vector<std::string>> result = Status::Internal("not run");
        {
          py::gil_scoped_release release;
          result = DeletePrefix(path, store, older_than_ms, globs);
        }
        return Check(std::move(result));
      },
      py::arg("path"), py::arg("storage") = py::dict(), py::arg("older_than_ms") = py::none(),
      py::arg("exclusions") = py::none(),
      "Deletes files under path (purge_s3_path); returns the uris deleted.");
}

}  // namespace openglue::engine
