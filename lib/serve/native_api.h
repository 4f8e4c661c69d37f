#pragma once
// attn's own API (translate_request.h has the body):
//
//   POST /v1/translate   per sentence its n-best hypotheses with scores, log-probabilities and
//                        token counts, and on request their word alignments
#include "serve/routes.h"
#include "serve/translation_service.h"

namespace attn::serve {

// Registers the route; `service` outlives `routes`' serving.
void add_native_api(Routes& routes, TranslationService& service);

}  // namespace attn::serve
