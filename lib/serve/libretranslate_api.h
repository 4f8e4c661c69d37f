#pragma once
// LibreTranslate's API, as its clients and frontends call it (translate_request.h has the bodies):
//
//   POST /translate            text or HTML, alternatives, source "auto" (the run's source)
//   POST /detect               the run's source language: attn has no language identifier
//   GET /languages             the run's pair
//   GET /frontend/settings     what LibreTranslate's web page asks for first
#include "serve/routes.h"
#include "serve/translation_service.h"

namespace attn::serve {

// Registers the four routes; `service` outlives `routes`' serving.
void add_libretranslate_api(Routes& routes, TranslationService& service);

}  // namespace attn::serve
