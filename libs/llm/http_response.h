// Reading an HTTP/1.1 response into an HttpResponse: the one parser configuration shared by the transport
// (which feeds it from a socket) and by tests and fuzzers (which feed it bytes).
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libs/llm/http_transport.h"

namespace accelopt::llm {

using HttpResponseParser = boost::beast::http::response_parser<boost::beast::http::string_body>;

// Applies the transport's limits (body at most HttpTransport::kMaxResponseBytes) to a fresh parser.
void ConfigureResponseParser(HttpResponseParser& parser);

// Status code, Retry-After and body of a complete response.
HttpResponse ToHttpResponse(boost::beast::http::response<boost::beast::http::string_body> response);

// Parses one complete response held in `bytes` (status line, headers, body by Content-Length, chunked
// encoding or end of input). DATA_LOSS naming the parser's complaint for malformed or truncated input or a
// body over the limit.
absl::StatusOr<HttpResponse> ParseHttpResponse(absl::string_view bytes);

}  // namespace accelopt::llm
