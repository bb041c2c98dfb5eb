// Idle HTTP/1.1 connections kept open for reuse, per origin (scheme://host:port), for the LLM transport.
#pragma once

#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace accelopt::llm {

// One open connection to an origin: a plain TCP stream, or a TLS stream over TCP (directly or through a
// CONNECT tunnel). Used by one request at a time.
struct PooledConnection {
  std::unique_ptr<boost::beast::tcp_stream> plain;
  std::unique_ptr<boost::beast::ssl_stream<boost::beast::tcp_stream>> tls;
  // When it went back to the pool.
  absl::Time idle_since;

  boost::beast::tcp_stream& tcp() { return tls != nullptr ? tls->next_layer() : *plain; }
};

// Thread-safe. Connections are handed out most recently used first (the one least likely to have been closed
// by the server's own idle timeout). A connection idle longer than `idle_timeout`, or one whose socket shows
// the peer closed it or sent bytes nobody asked for, is closed instead of handed out.
class ConnectionPool {
 public:
  // `now` is injectable for tests.
  ConnectionPool(
      absl::Duration idle_timeout, size_t max_idle_per_origin,
      std::function<absl::Time()> now = [] { return absl::Now(); })
      : idle_timeout_(idle_timeout), max_idle_per_origin_(max_idle_per_origin), now_(std::move(now)) {}

  // An idle connection to `origin` that is still usable, or nullptr.
  std::unique_ptr<PooledConnection> Take(const std::string& origin);
  // Keeps `connection` for reuse (closes it when the origin already holds max_idle_per_origin).
  void Put(const std::string& origin, std::unique_ptr<PooledConnection> connection);
  // Closes every idle connection; call before the io_context the sockets belong to is destroyed.
  void Clear();
  size_t idle_count() const;

 private:
  const absl::Duration idle_timeout_;
  const size_t max_idle_per_origin_;
  const std::function<absl::Time()> now_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::deque<std::unique_ptr<PooledConnection>>> idle_ ABSL_GUARDED_BY(mu_);
};

// True when an idle socket has nothing to read and no end of stream pending: the server has not closed it.
bool IdleSocketIsOpen(boost::beast::tcp_stream& stream);

}  // namespace accelopt::llm
