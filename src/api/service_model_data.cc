// The Glue service model, embedded from the build's generated/glue-service-2.json.
#include <cstddef>
#include <string_view>

#ifndef OPENGLUE_GLUE_MODEL_PATH
#error "OPENGLUE_GLUE_MODEL_PATH must name the extracted service model"
#endif

__asm__(".section .rodata\n"
        ".global openglue_glue_model_begin\n"
        "openglue_glue_model_begin:\n"
        ".incbin \"" OPENGLUE_GLUE_MODEL_PATH "\"\n"
        ".global openglue_glue_model_end\n"
        "openglue_glue_model_end:\n"
        ".byte 0\n"
        ".previous\n");

extern "C" const char openglue_glue_model_begin[];
extern "C" const char openglue_glue_model_end[];

namespace openglue::api {
std::string_view EmbeddedGlueModel() {
  return std::string_view(openglue_glue_model_begin,
                          static_cast<size_t>(openglue_glue_model_end - openglue_glue_model_begin));
}
}  // namespace openglue::api
