// The asynchronous calls a gRPC client has started whose call objects still exist.
//
// A client declares one as its last member, so it is destroyed first: it cancels the calls still running and
// waits until every call object is gone. A call object owns the grpc::ClientContext that holds a reference to the
// client's channel; only its in-flight callbacks own it (the handles its caller gets are weak), so it is
// destroyed once the call has finished, on the gRPC thread that ran its last callback. Waiting for it makes the
// client's owner, not a gRPC callback thread, release the channel. With gRPC 1.51 a channel destroyed on a
// callback thread can drop the process's last reference to the shared callback queue; that thread then shuts the
// queue down while polling it and the process aborts ("assertion failed: prior > 0").
#pragma once

#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "services/orchestrator/call_handle.h"

namespace accelopt::orchestrator {

class CallsInFlight {
 public:
  // Held by one call object for its whole life: declare it as the object's first member, so it is released after
  // the ClientContext.
  class Token {
   public:
    Token(Token&& other) noexcept : owner_(other.owner_) { other.owner_ = nullptr; }
    Token& operator=(Token&&) = delete;
    Token(const Token&) = delete;
    ~Token();

   private:
    friend class CallsInFlight;
    explicit Token(CallsInFlight* owner) : owner_(owner) {}
    CallsInFlight* owner_;
  };

  CallsInFlight() = default;
  CallsInFlight(const CallsInFlight&) = delete;
  CallsInFlight& operator=(const CallsInFlight&) = delete;
  // Cancels every watched call still alive, then blocks until every token has been released. Must not run on a
  // thread that one of these calls needs to finish (a call's own callback).
  ~CallsInFlight();

  // A token for a call about to start.
  Token Enter();
  // `call` is cancelled by the destructor if it is still alive then. Returns the handle to give the call's
  // caller: it cancels the call while it runs and does not keep the call object alive.
  std::shared_ptr<CallHandle> Watch(std::weak_ptr<CallHandle> call);

 private:
  void Leave();

  absl::Mutex mu_;
  int live_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::weak_ptr<CallHandle>> watched_ ABSL_GUARDED_BY(mu_);
  size_t watched_after_prune_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace accelopt::orchestrator
