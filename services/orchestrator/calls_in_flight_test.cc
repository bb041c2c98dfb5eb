#include "services/orchestrator/calls_in_flight.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <future>
#include <thread>

namespace accelopt::orchestrator {
namespace {

// A call object as the gRPC clients make them: it holds its token and counts its cancellations.
class FakeCall : public CallHandle {
 public:
  FakeCall(CallsInFlight::Token token, std::shared_ptr<std::atomic<int>> cancels)
      : token_(std::move(token)), cancels_(std::move(cancels)) {}
  void Cancel() override {
    cancels_->fetch_add(1);
    if (on_cancel) on_cancel();
  }
  std::function<void()> on_cancel;

 private:
  CallsInFlight::Token token_;
  std::shared_ptr<std::atomic<int>> cancels_;
};

TEST(CallsInFlightTest, DestructionCancelsALiveCallAndWaitsUntilItsObjectIsGone) {
  auto calls = std::make_unique<CallsInFlight>();
  auto cancels = std::make_shared<std::atomic<int>>(0);
  auto call = std::make_shared<FakeCall>(calls->Enter(), cancels);
  calls->Watch(call);
  std::promise<void> cancelled;
  call->on_cancel = [&cancelled] { cancelled.set_value(); };
  std::atomic<bool> destroyed{false};
  // The call's callback thread: it lets go of the call only once the client has asked to cancel it.
  std::thread callback_thread([&, call = std::move(call)]() mutable {
    cancelled.get_future().wait();
    EXPECT_EQ(cancels->load(), 1);
    destroyed.store(true);
    call.reset();
  });
  calls.reset();
  EXPECT_TRUE(destroyed.load());
  callback_thread.join();
}

TEST(CallsInFlightTest, OnlyCallsWhoseObjectsStillExistAreCancelled) {
  auto calls = std::make_unique<CallsInFlight>();
  auto cancels = std::make_shared<std::atomic<int>>(0);
  for (int i = 0; i < 200; ++i) calls->Watch(std::make_shared<FakeCall>(calls->Enter(), cancels));  // finished
  auto alive = std::make_shared<FakeCall>(calls->Enter(), cancels);
  calls->Watch(alive);
  std::promise<void> cancelled;
  alive->on_cancel = [&cancelled] { cancelled.set_value(); };
  std::thread callback_thread([&cancelled, call = std::move(alive)]() mutable {
    cancelled.get_future().wait();
    call.reset();
  });
  calls.reset();
  callback_thread.join();
  EXPECT_EQ(cancels->load(), 1);
}

TEST(CallsInFlightTest, TheCallersHandleCancelsARunningCallButDoesNotKeepItAlive) {
  CallsInFlight calls;
  auto cancels = std::make_shared<std::atomic<int>>(0);
  auto call = std::make_shared<FakeCall>(calls.Enter(), cancels);
  std::shared_ptr<CallHandle> handle = calls.Watch(call);
  handle->Cancel();
  EXPECT_EQ(cancels->load(), 1);
  std::weak_ptr<FakeCall> watched = call;
  call.reset();  // the call finished: its callbacks let go of it
  EXPECT_TRUE(watched.expired());
  handle->Cancel();  // a no-op now
  EXPECT_EQ(cancels->load(), 1);
}

}  // namespace
}  // namespace accelopt::orchestrator
