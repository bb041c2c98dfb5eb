#include "services/orchestrator/worker_resolver.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"

namespace accelopt::orchestrator {

WorkerResolver StaticWorkers(std::vector<std::string> addresses) {
  return [addresses = std::move(addresses)]() -> absl::StatusOr<std::vector<std::string>> { return addresses; };
}

WorkerResolver DnsWorkers(std::string name_and_port) {
  return [name_and_port]() -> absl::StatusOr<std::vector<std::string>> {
    const size_t colon = name_and_port.rfind(':');
    if (colon == std::string::npos) return absl::InvalidArgumentError("profiler_dns: expected host:port");
    const std::string host = name_and_port.substr(0, colon);
    const std::string port = name_and_port.substr(colon + 1);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* results = nullptr;
    if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &results); rc != 0) {
      return absl::UnavailableError(absl::StrCat("cannot resolve ", host, ": ", gai_strerror(rc)));
    }
    std::set<std::string> addresses;
    for (addrinfo* ai = results; ai != nullptr; ai = ai->ai_next) {
      char ip[INET6_ADDRSTRLEN] = {0};
      if (ai->ai_family == AF_INET) {
        inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(ai->ai_addr)->sin_addr, ip, sizeof(ip));
        addresses.insert(absl::StrCat(ip, ":", port));
      } else if (ai->ai_family == AF_INET6) {
        inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(ai->ai_addr)->sin6_addr, ip, sizeof(ip));
        addresses.insert(absl::StrCat("[", ip, "]:", port));
      }
    }
    freeaddrinfo(results);
    return std::vector<std::string>(addresses.begin(), addresses.end());
  };
}

}  // namespace accelopt::orchestrator
