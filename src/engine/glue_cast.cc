#include "engine/glue_cast.h"

#include <algorithm>
#include <cctype>
#include <string>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/util/decimal.h>
#include <arrow/util/value_parsing.h>

#include "engine/align.h"
#include "engine/glue_types.h"

namespace openglue::engine {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

template <typename Builder, typename Fn>
Result<std::shared_ptr<arrow::Array>> ParseStrings(const arrow::Array& input,
                                                   std::shared_ptr<arrow::DataType> type,
                                                   Fn&& parse) {
  std::unique_ptr<arrow::ArrayBuilder> base;
  auto st = arrow::MakeBuilder(arrow::default_memory_pool(), type, &base);
  if (!st.ok()) return Status::Internal(st.ToString());
  auto* builder = static_cast<Builder*>(base.get());
  (void)builder->Reserve(input.length());
  auto visit = [&](const auto& strings) -> arrow::Status {
    for (int64_t i = 0; i < strings.length(); ++i) {
      if (strings.IsNull(i)) {
        ARROW_RETURN_NOT_OK(builder->AppendNull());
        continue;
      }
      ARROW_RETURN_NOT_OK(parse(Trim(strings.GetView(i)), builder));
    }
    return arrow::Status::OK();
  };
  if (input.type_id() == arrow::Type::STRING) {
    st = visit(static_cast<const arrow::StringArray&>(input));
  } else {
    st = visit(static_cast<const arrow::LargeStringArray&>(input));
  }
  std::shared_ptr<arrow::Array> out;
  if (st.ok()) st = builder->Finish(&out);
  if (!st.ok()) return Status::Internal(st.ToString());
  return out;
}

template <typename Builder, typename CType>
Result<std::shared_ptr<arrow::Array>> StringToInt(const arrow::Array& input,
                                                  std::shared_ptr<arrow::DataType> type) {
  return ParseStrings<Builder>(input, type, [](std::string_view s, Builder* b) {
    int64_t v;
    if (ParseInt64Text(s, &v) && v >= std::numeric_limits<CType>::min() &&
        v <= std::numeric_limits<CType>::max()) {
      return b->Append(static_cast<CType>(v));
    }
    return b->AppendNull();
  });
}

Result<std::shared_ptr<arrow::Array>> AllNull(const std::shared_ptr<arrow::DataType>& type,
                                              int64_t length) {
  auto r = arrow::MakeArrayOfNull(type, length);
  if (!r.ok()) return Status::Internal(r.status().ToString());
  return *r;
}

Result<std::shared_ptr<arrow::Array>> CastString(const std::shared_ptr<arrow::Array>& array,
                                                 const std::shared_ptr<arrow::DataType>& type) {
  const arrow::Array& in = *array;
  switch (type->id()) {
    case arrow::Type::INT8: return StringToInt<arrow::Int8Builder, int8_t>(in, type);
    case arrow::Type::INT16: return StringToInt<arrow::Int16Builder, int16_t>(in, type);
    case arrow::Type::INT32: return StringToInt<arrow::Int32Builder, int32_t>(in, type);
    case arrow::Type::INT64: return StringToInt<arrow::Int64Builder, int64_t>(in, type);
    case arrow::Type::FLOAT:
      return ParseStrings<arrow::FloatBuilder>(in, type, [](std::string_view s, auto* b) {
        double v;
        return ParseDoubleText(s, &v) ? b->Append(static_cast<float>(v)) : b->AppendNull();
      });
    case arrow::Type::DOUBLE:
      return ParseStrings<arrow::DoubleBuilder>(in, type, [](std::string_view s, auto* b) {
        double v;
        return ParseDoubleText(s, &v) ? b->Append(v) : b->AppendNull();
      });
    case arrow::Type::BOOL:
      return ParseStrings<arrow::BooleanBuilder>(in, type, [](std::string_view s, auto* b) {
        std::string lower(s);
        std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
        if (lower == "true") return b->Append(true);
        if (lower == "false") return b->Append(false);
        return b->AppendNull();
      });
    case arrow::Type::DATE32:
      return ParseStrings<arrow::Date32Builder>(in, type, [](std::string_view s, auto* b) {
        int32_t v;
        if (arrow::internal::ParseValue<arrow::Date32Type>(s.data(), s.size(), &v)) {
          return b->Append(v);
        }
        return b->AppendNull();
      });
    case arrow::Type::TIMESTAMP: {
      const auto& ts = static_cast<const arrow::TimestampType&>(*type);
      return ParseStrings<arrow::TimestampBuilder>(in, type, [&ts](std::string_view s, auto* b) {
        int64_t v;
        if (arrow::internal::ParseValue<arrow::TimestampType>(ts, s.data(), s.size(), &v)) {
          return b->Append(v);
        }
        return b->AppendNull();
      });
    }
    case arrow::Type::DECIMAL128: {
      const auto& dec = static_cast<const arrow::Decimal128Type&>(*type);
      return ParseStrings<arrow::Decimal128Builder>(in, type, [&dec](std::string_view s, auto* b) {
        arrow::Decimal128 v;
        int32_t precision, scale;
        if (!arrow::Decimal128::FromString(s, &v, &precision, &scale).ok()) return b->AppendNull();
        // Extra fraction digits are rounded half up, as Spark's cast does.
        arrow::Decimal128 rescaled = scale > dec.scale()
                                         ? v.ReduceScaleBy(scale - dec.scale(), true)
                                         : v.IncreaseScaleBy(dec.scale() - scale);
        if (!rescaled.FitsInPrecision(dec.precision())) return b->AppendNull();
        return b->Append(rescaled);
      });
    }
    default: break;
  }
  return std::shared_ptr<arrow::Array>();
}

}  // namespace

Result<std::shared_ptr<arrow::Array>> GlueCast(const std::shared_ptr<arrow::Array>& array,
                                               const std::shared_ptr<arrow::DataType>& type) {
  if (array == nullptr || type == nullptr) return Status::InvalidInput("glue_cast: null input");
  if (array->type()->Equals(*type)) return array;
  if (array->type_id() == arrow::Type::NA) return AllNull(type, array->length());
  if (array->type_id() == arrow::Type::STRING || array->type_id() == arrow::Type::LARGE_STRING) {
    OG_ASSIGN_OR_RETURN(auto parsed, CastString(array, type));
    if (parsed) return parsed;
  }
  if (type->id() == arrow::Type::DENSE_UNION || type->id() == arrow::Type::STRUCT ||
      type->id() == arrow::Type::LIST) {
    return AlignArray(array, type);
  }
  if (array->type_id() == arrow::Type::DENSE_UNION) {
    // A choice cast to one type: every member is cast, each row takes its member's value.
    const auto& u = static_cast<const arrow::DenseUnionArray&>(*array);
    std::vector<std::shared_ptr<arrow::Array>> cast;
    for (int c = 0; c < u.num_fields(); ++c) {
      OG_ASSIGN_OR_RETURN(auto child, GlueCast(u.field(c), type));
      cast.push_back(child);
    }
    std::unique_ptr<arrow::ArrayBuilder> builder;
    auto st = arrow::MakeBuilder(arrow::default_memory_pool(), type, &builder);
    const auto& codes = static_cast<const arrow::UnionType&>(*u.type()).child_ids();
    for (int64_t i = 0; st.ok() && i < u.length(); ++i) {
      int child = codes[u.type_code(i)];
      st = builder->AppendArraySlice(arrow::ArraySpan(*cast[child]->data()), u.value_offset(i), 1);
    }
    std::shared_ptr<arrow::Array> out;
    if (st.ok()) st = builder->Finish(&out);
    if (!st.ok()) return Status::Internal("glue_cast: " + st.ToString());
    return out;
  }
  arrow::compute::CastOptions options = arrow::compute::CastOptions::Unsafe(type);
  auto cast = arrow::compute::Cast(*array, type, options);
  if (cast.ok()) return *cast;
  return AllNull(type, array->length());
}

Result<std::shared_ptr<arrow::RecordBatch>> Conform(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                    const std::shared_ptr<arrow::Schema>& schema) {
  return AlignBatch(batch, schema);
}

}  // namespace openglue::engine
