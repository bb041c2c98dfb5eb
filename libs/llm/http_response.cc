#include "libs/llm/http_response.h"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

#include "absl/strings/str_cat.h"

namespace accelopt::llm {

namespace http = boost::beast::http;

void ConfigureResponseParser(HttpResponseParser& parser) { parser.body_limit(HttpTransport::kMaxResponseBytes); }

HttpResponse ToHttpResponse(http::response<http::string_body> response) {
  HttpResponse out;
  out.status = response.result_int();
  if (auto it = response.find(http::field::retry_after); it != response.end()) {
    out.retry_after = std::string(it->value());
  }
  out.body = std::move(response.body());
  return out;
}

absl::StatusOr<HttpResponse> ParseHttpResponse(absl::string_view bytes) {
  HttpResponseParser parser;
  ConfigureResponseParser(parser);
  boost::system::error_code ec;
  size_t used = 0;
  // The header alone first: Boost 1.74's eager parser goes on into the body after finish_header flagged a
  // Content-Length over body_limit, and reserves that many bytes.
  parser.eager(false);
  while (!parser.is_header_done() && used < bytes.size()) {
    const size_t n = parser.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
    if (ec == http::error::need_more) break;
    if (ec) return absl::DataLossError(absl::StrCat("malformed HTTP response: ", ec.message()));
    if (n == 0) break;
    used += n;
  }
  parser.eager(true);
  while (!parser.is_done() && used < bytes.size()) {
    const size_t n = parser.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
    if (ec == http::error::need_more) break;
    if (ec) return absl::DataLossError(absl::StrCat("malformed HTTP response: ", ec.message()));
    if (n == 0) break;
    used += n;
  }
  if (bytes.empty()) return absl::DataLossError("empty HTTP response (no status line)");
  if (!parser.is_done()) {
    parser.put_eof(ec);
    if (ec) return absl::DataLossError(absl::StrCat("truncated HTTP response: ", ec.message()));
  }
  if (!parser.is_done()) return absl::DataLossError("truncated HTTP response");
  return ToHttpResponse(parser.release());
}

}  // namespace accelopt::llm
