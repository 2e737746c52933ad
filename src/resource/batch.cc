#include "resource/batch.h"

namespace openglue::resource {

Json ErrorDetail(const Status& status) {
  return Json{{"ErrorCode", GlueErrorName(status.code())}, {"ErrorMessage", status.message()}};
}

Status RecordItemError(const Status& item, Json entry, Json* errors, const char* detail_member) {
  if (item.ok()) return Status::OK();
  if (item.code() == StatusCode::kInternal) return item;
  if (errors != nullptr) {
    if (!entry.is_object()) entry = Json::object();
    entry[detail_member] = ErrorDetail(item);
    errors->push_back(std::move(entry));
  }
  return Status::OK();
}

}  // namespace openglue::resource
