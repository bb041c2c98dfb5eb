#include "libs/testing/http_get.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "absl/strings/str_cat.h"

namespace accelopt::testing {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

absl::StatusOr<std::string> HttpGet(const std::string& address, const std::string& target, int timeout_ms) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos) return absl::InvalidArgumentError("address must be host:port");
  try {
    boost::asio::io_context ioc;
    tcp::resolver resolver(ioc);
    beast::tcp_stream stream(ioc);
    stream.expires_after(std::chrono::milliseconds(timeout_ms));
    stream.connect(resolver.resolve(address.substr(0, colon), address.substr(colon + 1)));
    http::request<http::empty_body> req{http::verb::get, target, 11};
    req.set(http::field::host, address);
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(stream, buffer, res);
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    if (res.result() != http::status::ok) {
      return absl::UnavailableError(absl::StrCat("GET ", target, ": HTTP ", res.result_int()));
    }
    return res.body();
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("GET http://", address, target, ": ", e.what()));
  }
}

}  // namespace accelopt::testing
