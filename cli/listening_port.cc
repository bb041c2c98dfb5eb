#include "cli/listening_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace accelopt::cli {
namespace {

constexpr char kListenState[] = "0A";

// Inodes of the sockets listening on `port`, from a /proc/net/tcp-format table; false when it cannot be read.
bool ListeningInodes(const std::string& table, int port, std::set<std::string>* inodes) {
  std::ifstream in(table);
  if (!in) return false;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    if (!(fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode)) {
      continue;
    }
    const size_t colon = local.rfind(':');
    uint32_t local_port = 0;
    if (state != kListenState || colon == std::string::npos ||
        !absl::SimpleHexAtoi(local.substr(colon + 1), &local_port) || static_cast<int>(local_port) != port) {
      continue;
    }
    inodes->insert(inode);
  }
  return true;
}

}  // namespace

bool PortIsFree(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool free = bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return free;
}

bool ProcessListensOn(pid_t pid, int port) {
  std::set<std::string> inodes;
  const bool v4 = ListeningInodes("/proc/net/tcp", port, &inodes);
  const bool v6 = ListeningInodes("/proc/net/tcp6", port, &inodes);
  if (!v4 && !v6) return true;  // no socket tables to read (a restricted /proc): cannot tell, so do not refuse
  if (inodes.empty()) return false;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(absl::StrCat("/proc/", pid, "/fd"), ec)) {
    std::error_code link_ec;
    const std::string target = std::filesystem::read_symlink(entry.path(), link_ec).string();
    if (link_ec || target.rfind("socket:[", 0) != 0) continue;
    if (inodes.count(target.substr(8, target.size() - 9)) > 0) return true;
  }
  return false;
}

}  // namespace accelopt::cli
