#include "libs/llm/connection_pool.h"

#include <sys/socket.h>

#include <cerrno>

namespace accelopt::llm {

bool IdleSocketIsOpen(boost::beast::tcp_stream& stream) {
  auto& socket = stream.socket();
  if (!socket.is_open()) return false;
  char byte;
  ssize_t n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  // 0: the peer closed; > 0: bytes nobody asked for (a late error page, a TLS close_notify).
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

std::unique_ptr<PooledConnection> ConnectionPool::Take(const std::string& origin) {
  std::unique_ptr<PooledConnection> found;
  std::deque<std::unique_ptr<PooledConnection>> stale;
  {
    absl::MutexLock lock(&mu_);
    auto it = idle_.find(origin);
    if (it == idle_.end()) return nullptr;
    const absl::Time now = now_();
    while (!it->second.empty() && found == nullptr) {
      std::unique_ptr<PooledConnection> candidate = std::move(it->second.back());
      it->second.pop_back();
      if (now - candidate->idle_since < idle_timeout_ && IdleSocketIsOpen(candidate->tcp())) {
        found = std::move(candidate);
      } else {
        stale.push_back(std::move(candidate));
      }
    }
    if (it->second.empty()) idle_.erase(it);
  }
  return found;  // `stale` connections close here, outside the lock
}

void ConnectionPool::Put(const std::string& origin, std::unique_ptr<PooledConnection> connection) {
  connection->idle_since = now_();
  absl::MutexLock lock(&mu_);
  std::deque<std::unique_ptr<PooledConnection>>& idle = idle_[origin];
  if (idle.size() >= max_idle_per_origin_) {
    idle.pop_front();  // the oldest goes
  }
  idle.push_back(std::move(connection));
}

void ConnectionPool::Clear() {
  std::map<std::string, std::deque<std::unique_ptr<PooledConnection>>> closing;
  absl::MutexLock lock(&mu_);
  closing.swap(idle_);
}

size_t ConnectionPool::idle_count() const {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [origin, idle] : idle_) n += idle.size();
  return n;
}

}  // namespace accelopt::llm
