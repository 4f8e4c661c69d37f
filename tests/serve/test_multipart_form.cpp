// multipart/form-data: the boundary from the Content-Type, parts by name, and a 400 naming what
// is wrong with a malformed body.
#include <catch2/catch.hpp>

#include "serve/multipart_form.h"
#include "serve/translate_request.h"

using namespace attn::serve;
using Catch::Contains;

namespace {

// The error message of a form that must be refused with 400.
std::string refusal(const std::string& body, const std::string& boundary = "XyZ") {
  try {
    parse_multipart_form(body, boundary);
  } catch (const HttpError& error) {
    CHECK(error.status() == 400);
    return error.what();
  }
  FAIL("accepted: " << body);
  return "";
}

}  // namespace

TEST_CASE("multipart boundary: token - quoted - any case - missing or too long refused", "[serve]") {
  CHECK(is_multipart_form("multipart/form-data; boundary=abc"));
  CHECK(is_multipart_form("Multipart/Form-Data"));
  CHECK_FALSE(is_multipart_form("multipart/mixed; boundary=abc"));
  CHECK(multipart_boundary("multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxk") ==
        "----WebKitFormBoundary7MA4YWxk");
  CHECK(multipart_boundary("multipart/form-data; charset=utf-8; BOUNDARY=abc ") == "abc");
  CHECK(multipart_boundary("multipart/form-data; boundary=\"a b;c\"") == "a b;c");
  CHECK(multipart_boundary("multipart/form-data; boundary=\"a\\\"b\"; x=y") == "a\"b");
  const auto boundary_error = [](const std::string& content_type) {
    try {
      multipart_boundary(content_type);
    } catch (const HttpError& error) {
      CHECK(error.status() == 400);
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(boundary_error("multipart/form-data"), Contains("has no boundary"));
  CHECK_THAT(boundary_error("multipart/form-data; boundary="), Contains("has no boundary"));
  CHECK_THAT(boundary_error("multipart/form-data; boundary=" + std::string(71, 'b')), Contains("70 characters"));
}

TEST_CASE("multipart parts: names and contents in order - preamble and epilogue ignored", "[serve]") {
  const std::string body =
      "preamble\r\n"
      "--XyZ\r\n"
      "Content-Disposition: form-data; name=\"q\"\r\n"
      "\r\n"
      "Hello\r\nworld --XyZ inside a line\r\n"
      "--XyZ  \r\n"  // transport padding after a boundary
      "content-disposition: form-data; name=source\r\n"
      "Content-Type: text/plain\r\n"
      "\r\n"
      "en\r\n"
      "--XyZ\r\n"
      "Content-Disposition: form-data; name=\"empty\"; filename=\"e.txt\"\r\n"
      "\r\n"
      "\r\n"
      "--XyZ--\r\n"
      "epilogue --XyZ\r\n";
  const FormParts parts = parse_multipart_form(body, "XyZ");
  REQUIRE(parts.size() == 3);
  CHECK(parts[0] == std::make_pair(std::string("q"), std::string("Hello\r\nworld --XyZ inside a line")));
  CHECK(parts[1] == std::make_pair(std::string("source"), std::string("en")));
  CHECK(parts[2] == std::make_pair(std::string("empty"), std::string()));
  // A body that opens with its boundary, and a part without headers is refused for its name.
  CHECK(parse_multipart_form("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--b--", "b") ==
        FormParts{{"a", "1"}});
  CHECK(parse_multipart_form("--b--\r\n", "b").empty());
}

TEST_CASE("multipart bodies refused with 400 naming what is wrong", "[serve]") {
  const std::string part = "--XyZ\r\nContent-Disposition: form-data; name=\"q\"\r\n\r\nHello";
  CHECK_THAT(refusal(part + "\r\n--XyZ"), Contains("ends before its final boundary --XyZ--"));
  CHECK_THAT(refusal(part), Contains("ends before its final boundary"));
  CHECK_THAT(refusal(part + "\r\n--XyZ\r\n"), Contains("part without a blank line"));
  CHECK_THAT(refusal("no boundary here"), Contains("has no boundary line --XyZ"));
  CHECK_THAT(refusal("--XyZ\r\nContent-Disposition: form-data\r\n\r\nx\r\n--XyZ--"),
             Contains("part without a name (part 1"));
  CHECK_THAT(refusal("--XyZ\r\n\r\nx\r\n--XyZ--"), Contains("part without a name"));
  CHECK_THAT(refusal("--XyZjunk\r\n"), Contains("text after a boundary"));
  CHECK_THAT(refusal(part + "\r\n--XyZ--", "Other"), Contains("no boundary line --Other"));
}
