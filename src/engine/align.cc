#include "engine/align.h"

#include <arrow/api.h>

#include "engine/glue_cast.h"
#include "engine/glue_types.h"

namespace openglue::engine {
namespace {

Status FromArrow(const arrow::Status& st) {
  return st.ok() ? Status::OK() : Status::Internal(st.ToString());
}

Result<std::shared_ptr<arrow::Array>> NullArray(const std::shared_ptr<arrow::DataType>& type,
                                                int64_t length) {
  auto r = arrow::MakeArrayOfNull(type, length);
  if (!r.ok()) return FromArrow(r.status());
  return *r;
}

bool IsUnion(const arrow::DataType& t) {
  return t.id() == arrow::Type::DENSE_UNION || t.id() == arrow::Type::SPARSE_UNION;
}

int FindMember(const arrow::UnionType& target, const arrow::DataType& type) {
  std::string slot = ChoiceSlot(type);
  for (int i = 0; i < target.num_fields(); ++i) {
    if (ChoiceSlot(*target.field(i)->type()) == slot) return i;
  }
  return -1;
}

Result<std::shared_ptr<arrow::Array>> ToUnion(const std::shared_ptr<arrow::Array>& array,
                                              const std::shared_ptr<arrow::DataType>& type) {
  const auto& target = static_cast<const arrow::UnionType&>(*type);
  const int64_t n = array->length();
  std::vector<std::shared_ptr<arrow::Array>> children(target.num_fields());
  auto ids_buf = arrow::AllocateBuffer(n);
  auto off_buf = arrow::AllocateBuffer(n * sizeof(int32_t));
  if (!ids_buf.ok() || !off_buf.ok()) return Status::Internal("out of memory");
  auto* ids = reinterpret_cast<int8_t*>((*ids_buf)->mutable_data());
  auto* offsets = reinterpret_cast<int32_t*>((*off_buf)->mutable_data());
  if (array->type_id() == arrow::Type::DENSE_UNION) {
    const auto& source = static_cast<const arrow::DenseUnionArray&>(*array);
    const auto& source_type = static_cast<const arrow::UnionType&>(*array->type());
    std::vector<int> map(source_type.num_fields(), -1);
    for (int c = 0; c < source_type.num_fields(); ++c) {
      int m = FindMember(target, *source_type.field(c)->type());
      if (m < 0 || children[m] != nullptr) {
        return Status::InvalidInput("cannot fit " + array->type()->ToString() + " into " +
                                    type->ToString());
      }
      map[c] = m;
      OG_ASSIGN_OR_RETURN(children[m],
                          AlignArray(source.field(c), target.field(m)->type()));
    }
    for (int64_t i = 0; i < n; ++i) {
      ids[i] = target.type_codes()[map[source_type.child_ids()[source.type_code(i)]]];
      offsets[i] = source.value_offset(i);
    }
  } else {
    int m = FindMember(target, *array->type());
    if (m < 0) m = 0;  // no member of that kind: a conversion into the first member
    OG_ASSIGN_OR_RETURN(children[m], AlignArray(array, target.field(m)->type()));
    for (int64_t i = 0; i < n; ++i) {
      ids[i] = target.type_codes()[m];
      offsets[i] = static_cast<int32_t>(i);
    }
  }
  for (int c = 0; c < target.num_fields(); ++c) {
    if (children[c] == nullptr) {
      OG_ASSIGN_OR_RETURN(children[c], NullArray(target.field(c)->type(), 0));
    }
  }
  std::vector<std::shared_ptr<arrow::ArrayData>> child_data;
  for (auto& c : children) child_data.push_back(c->data());
  auto data = arrow::ArrayData::Make(
      type, n, {nullptr, std::shared_ptr<arrow::Buffer>(std::move(*ids_buf)),
                std::shared_ptr<arrow::Buffer>(std::move(*off_buf))}, 0);
  data->child_data = std::move(child_data);
  return arrow::MakeArray(data);
}

}  // namespace

Result<std::shared_ptr<arrow::Array>> AlignArray(const std::shared_ptr<arrow::Array>& array,
                                                 const std::shared_ptr<arrow::DataType>& type) {
  if (array->type()->Equals(*type)) return array;
  if (array->type_id() == arrow::Type::NA) return NullArray(type, array->length());
  if (IsUnion(*type) && type->id() == arrow::Type::DENSE_UNION) return ToUnion(array, type);
  const auto& in = array->data();
  if (type->id() == arrow::Type::STRUCT && array->type_id() == arrow::Type::STRUCT) {
    // Children of ArrayData are not sliced by the parent's offset: align them whole.
    const auto& source_type = static_cast<const arrow::StructType&>(*array->type());
    auto out = arrow::ArrayData::Make(type, in->length, {in->buffers[0]}, in->null_count,
                                      in->offset);
    for (const auto& field : type->fields()) {
      int index = source_type.GetFieldIndex(field->name());
      std::shared_ptr<arrow::Array> child;
      if (index < 0) {
        OG_ASSIGN_OR_RETURN(child, NullArray(field->type(), in->offset + in->length));
      } else {
        OG_ASSIGN_OR_RETURN(child,
                            AlignArray(arrow::MakeArray(in->child_data[index]), field->type()));
      }
      out->child_data.push_back(child->data());
    }
    return arrow::MakeArray(out);
  }
  if (type->id() == arrow::Type::LIST && array->type_id() == arrow::Type::LIST) {
    auto out = arrow::ArrayData::Make(type, in->length, {in->buffers[0], in->buffers[1]},
                                      in->null_count, in->offset);
    OG_ASSIGN_OR_RETURN(auto values, AlignArray(arrow::MakeArray(in->child_data[0]),
                                                type->field(0)->type()));
    out->child_data.push_back(values->data());
    return arrow::MakeArray(out);
  }
  return GlueCast(array, type);
}

Result<std::shared_ptr<arrow::RecordBatch>> AlignBatch(
    const std::shared_ptr<arrow::RecordBatch>& batch, const std::shared_ptr<arrow::Schema>& schema) {
  std::vector<std::shared_ptr<arrow::Array>> columns;
  columns.reserve(schema->num_fields());
  for (const auto& field : schema->fields()) {
    auto column = batch->GetColumnByName(field->name());
    if (column == nullptr) {
      OG_ASSIGN_OR_RETURN(column, NullArray(field->type(), batch->num_rows()));
    } else {
      OG_ASSIGN_OR_RETURN(column, AlignArray(column, field->type()));
    }
    columns.push_back(std::move(column));
  }
  return arrow::RecordBatch::Make(schema, batch->num_rows(), std::move(columns));
}

}  // namespace openglue::engine
