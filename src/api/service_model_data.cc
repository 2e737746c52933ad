// The service models, embedded from the build's generated/<service>-service-2.json: Glue's and
// CloudWatch Logs'.
#include <cstddef>
#include <string_view>

#ifndef OPENGLUE_GLUE_MODEL_PATH
#error "OPENGLUE_GLUE_MODEL_PATH must name the extracted Glue service model"
#endif
#ifndef OPENGLUE_LOGS_MODEL_PATH
#error "OPENGLUE_LOGS_MODEL_PATH must name the extracted CloudWatch Logs service model"
#endif

__asm__(".section .rodata\n"
        ".global openglue_glue_model_begin\n"
        "openglue_glue_model_begin:\n"
        ".incbin \"" OPENGLUE_GLUE_MODEL_PATH "\"\n"
        ".global openglue_glue_model_end\n"
        "openglue_glue_model_end:\n"
        ".byte 0\n"
        ".global openglue_logs_model_begin\n"
        "openglue_logs_model_begin:\n"
        ".incbin \"" OPENGLUE_LOGS_MODEL_PATH "\"\n"
        ".global openglue_logs_model_end\n"
        "openglue_logs_model_end:\n"
        ".byte 0\n"
        ".previous\n");

extern "C" const char openglue_glue_model_begin[];
extern "C" const char openglue_glue_model_end[];
extern "C" const char openglue_logs_model_begin[];
extern "C" const char openglue_logs_model_end[];

namespace openglue::api {
std::string_view EmbeddedGlueModel() {
  return std::string_view(openglue_glue_model_begin,
                          static_cast<size_t>(openglue_glue_model_end - openglue_glue_model_begin));
}
std::string_view EmbeddedLogsModel() {
  return std::string_view(openglue_logs_model_begin,
                          static_cast<size_t>(openglue_logs_model_end - openglue_logs_model_begin));
}
}  // namespace openglue::api
