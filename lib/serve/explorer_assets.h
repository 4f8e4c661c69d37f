#pragma once
// The explorer page's files (lib/serve/assets/), compiled into the library by
// cmake/embed_assets.cmake. explorer_page.h puts them together.
namespace attn::serve::assets {

extern const char* const kExplorerHtml;  // the document, with the places of the rest marked
extern const char* const kExplorerCss;
extern const char* const kExplorerJs;

}  // namespace attn::serve::assets
