#pragma once
// multipart/form-data bodies (RFC 7578 over RFC 2046's multipart syntax), as a browser's
// FormData or LibreTranslate's clients send them: the parts' names and contents, in order.
// The HTTP transport (http_transport.h) reads a body whole and bounded by --max-body-bytes
// before this sees it, so the parser works on a string and needs no limit of its own.
//
//   Content-Type: multipart/form-data; boundary=XyZ
//   --XyZ\r\n
//   Content-Disposition: form-data; name="q"\r\n
//   \r\n
//   Hello\r\n
//   --XyZ--\r\n
//   -> {{"q", "Hello"}}
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn::serve {

using FormParts = std::vector<std::pair<std::string, std::string>>;  // (name, content)

// Whether `content_type` is multipart/form-data (any parameters, any case).
bool is_multipart_form(std::string_view content_type);

// The boundary parameter of a multipart/form-data Content-Type (a token or a quoted string).
// Throws HttpError 400 when it has none or one longer than RFC 2046's 70 characters.
std::string multipart_boundary(std::string_view content_type);

// The parts of `body` delimited by `boundary`: preamble and epilogue ignored, each part's name
// from its Content-Disposition header, its content byte for byte. Throws HttpError 400 naming
// what is wrong: no first boundary, a part without a blank line after its headers or without a
// name, a body that ends before the final boundary ("--boundary--").
FormParts parse_multipart_form(std::string_view body, std::string_view boundary);

}  // namespace attn::serve
