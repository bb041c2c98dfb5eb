#include "services/orchestrator/calls_in_flight.h"

#include <algorithm>

namespace accelopt::orchestrator {
namespace {

class WeakCallHandle : public CallHandle {
 public:
  explicit WeakCallHandle(std::weak_ptr<CallHandle> call) : call_(std::move(call)) {}
  void Cancel() override {
    if (auto call = call_.lock()) call->Cancel();
  }

 private:
  const std::weak_ptr<CallHandle> call_;
};

}  // namespace

CallsInFlight::Token::~Token() {
  if (owner_ != nullptr) owner_->Leave();
}

CallsInFlight::~CallsInFlight() {
  std::vector<std::shared_ptr<CallHandle>> alive;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& watched : watched_) {
      if (auto call = watched.lock()) alive.push_back(std::move(call));
    }
    watched_.clear();
  }
  for (const auto& call : alive) call->Cancel();
  alive.clear();  // a call whose last reference this was is destroyed here, releasing its token
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](int* live) { return *live == 0; }, &live_));
}

CallsInFlight::Token CallsInFlight::Enter() {
  absl::MutexLock lock(&mu_);
  ++live_;
  return Token(this);
}

std::shared_ptr<CallHandle> CallsInFlight::Watch(std::weak_ptr<CallHandle> call) {
  auto handle = std::make_shared<WeakCallHandle>(call);
  absl::MutexLock lock(&mu_);
  // Finished calls are dropped whenever the list has doubled since the last pass, so it stays proportional to the
  // calls alive.
  if (watched_.size() >= 2 * std::max<size_t>(watched_after_prune_, 32)) {
    std::erase_if(watched_, [](const std::weak_ptr<CallHandle>& w) { return w.expired(); });
    watched_after_prune_ = watched_.size();
  }
  watched_.push_back(std::move(call));
  return handle;
}

void CallsInFlight::Leave() {
  absl::MutexLock lock(&mu_);
  --live_;
}

}  // namespace accelopt::orchestrator
