#include "services/orchestrator/testing/fake_clients.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "libs/core/sha256.h"

namespace accelopt::orchestrator::testing {
namespace {

class NoopHandle : public CallHandle {
 public:
  void Cancel() override {}
};

v1::TokenUsage Usage(int64_t prompt, int64_t completion, double cost) {
  v1::TokenUsage u;
  u.set_prompt_tokens(prompt);
  u.set_completion_tokens(completion);
  u.set_cost_usd(cost);
  u.set_requests(1);
  return u;
}

// A uniform number in [0, 1) from a string.
double Unit(const std::string& key) {
  uint64_t x = 0;
  (void)absl::SimpleHexAtoi(absl::string_view(core::Sha256Hex(key)).substr(0, 12), &x);
  return static_cast<double>(x) / static_cast<double>(uint64_t{1} << 48);
}

// Runs `answer` inline, or holds it in `held` until released (answer) or cancelled (CANCELLED).
template <typename T>
std::shared_ptr<CallHandle> AnswerOrHold(bool hold, HeldCalls& held, std::function<absl::StatusOr<T>()> answer,
                                         Callback<T> done) {
  if (!hold) {
    std::move(done)(answer());
    return std::make_shared<NoopHandle>();
  }
  auto shared = std::make_shared<Callback<T>>(std::move(done));
  return held.Hold([shared, answer](bool cancelled) {
    std::move (*shared)(cancelled ? absl::StatusOr<T>(absl::CancelledError("cancelled")) : answer());
  });
}

}  // namespace

std::string FakeKernel(double latency_ms, const std::string& tag) {
  return absl::StrFormat("# latency=%.6f\n# %s\nimport nki\n", latency_ms, tag);
}

std::optional<double> FakeLatency(const std::string& source) {
  constexpr absl::string_view kPrefix = "# latency=";
  if (source.rfind(kPrefix.data(), 0) != 0) return std::nullopt;
  double latency = 0;
  if (!absl::SimpleAtod(absl::string_view(source).substr(kPrefix.size(), source.find('\n') - kPrefix.size()),
                        &latency)) {
    return std::nullopt;
  }
  return latency;
}

// ---------------------------------------------------------------------------------------------------------

struct HeldCalls::Entry : public CallHandle {
  absl::Mutex mu;
  bool finished ABSL_GUARDED_BY(mu) = false;
  std::function<void(bool)> complete ABSL_GUARDED_BY(mu);
  std::atomic<int>* cancelled_counter = nullptr;

  void Finish(bool cancelled) {
    std::function<void(bool)> fn;
    {
      absl::MutexLock lock(&mu);
      if (finished) return;
      finished = true;
      fn = std::move(complete);
    }
    if (cancelled) cancelled_counter->fetch_add(1);
    fn(cancelled);
  }
  void Cancel() override { Finish(true); }
};

std::shared_ptr<CallHandle> HeldCalls::Hold(std::function<void(bool cancelled)> complete) {
  auto entry = std::make_shared<Entry>();
  {
    absl::MutexLock entry_lock(&entry->mu);
    entry->complete = std::move(complete);
  }
  entry->cancelled_counter = &cancelled_;
  absl::MutexLock lock(&mu_);
  entries_.push_back(entry);
  return entry;
}

int HeldCalls::ReleaseAll() { return Release(/*newest_first=*/false); }

int HeldCalls::ReleaseNewestFirst() { return Release(/*newest_first=*/true); }

bool HeldCalls::ReleaseNewest() {
  std::shared_ptr<Entry> newest;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = entries_.rbegin(); it != entries_.rend() && newest == nullptr; ++it) {
      const std::shared_ptr<Entry>& e = *it;
      absl::MutexLock entry_lock(&e->mu);
      if (!e->finished) newest = e;
    }
  }
  if (newest == nullptr) return false;
  newest->Finish(false);
  return true;
}

int HeldCalls::Release(bool newest_first) {
  std::vector<std::shared_ptr<Entry>> entries;
  {
    absl::MutexLock lock(&mu_);
    entries.swap(entries_);
  }
  if (newest_first) std::reverse(entries.begin(), entries.end());
  int n = 0;
  for (auto& e : entries) {
    bool pending;
    {
      absl::MutexLock lock(&e->mu);
      pending = !e->finished;
    }
    if (pending) {
      e->Finish(false);
      ++n;
    }
  }
  return n;
}

int HeldCalls::size() const {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (const auto& e : entries_) {
    absl::MutexLock entry_lock(&e->mu);
    n += e->finished ? 0 : 1;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------------------

FakePlanner::FakePlanner() {
  handler_ = [](const v1::PlanRequest& request) -> absl::StatusOr<v1::PlanResponse> {
    v1::PlanResponse response;
    for (int j = 0; j < request.num_plans(); ++j) {
      v1::PlanSample* s = response.add_samples();
      s->mutable_plan()->set_text(absl::StrCat("plan ", j, " for ", request.kernel().sha256().substr(0, 8)));
      s->mutable_plan()->set_title(absl::StrCat("plan ", j));
      *s->mutable_usage() = Usage(100, 20, 0.001);
    }
    *response.mutable_usage() = Usage(100 * request.num_plans(), 20 * request.num_plans(), 0.001 * request.num_plans());
    return response;
  };
}

void FakePlanner::SetHandler(Handler handler) {
  absl::MutexLock lock(&mu_);
  handler_ = std::move(handler);
}

std::vector<v1::PlanRequest> FakePlanner::requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

int FakePlanner::calls() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(requests_.size());
}

std::shared_ptr<CallHandle> FakePlanner::Plan(v1::PlanRequest request, absl::Duration,
                                              Callback<v1::PlanResponse> done) {
  Handler handler;
  {
    absl::MutexLock lock(&mu_);
    requests_.push_back(request);
    handler = handler_;
  }
  return AnswerOrHold<v1::PlanResponse>(
      hold_, held_, [handler, request] { return handler(request); }, std::move(done));
}

// ---------------------------------------------------------------------------------------------------------

FakeExecutor::FakeExecutor() : handler_(&FakeExecutor::DefaultHandler) {}

absl::StatusOr<v1::ImplementResponse> FakeExecutor::DefaultHandler(const v1::ImplementRequest& request) {
  v1::ImplementResponse response;
  const double parent = FakeLatency(request.kernel().source()).value_or(1.0);
  for (int i = 0; i < request.num_samples(); ++i) {
    const std::string key = absl::StrCat(request.seed(), "|", i);
    const double latency = parent * (0.8 + 0.4 * Unit(key));
    v1::KernelSample* s = response.add_samples();
    s->mutable_kernel()->set_source(FakeKernel(latency, key));
    *s->mutable_usage() = Usage(200, 100, 0.002);
  }
  *response.mutable_usage() = Usage(200, 100, 0.002);
  return response;
}

void FakeExecutor::SetHandler(Handler handler) {
  absl::MutexLock lock(&mu_);
  handler_ = std::move(handler);
}

std::vector<v1::ImplementRequest> FakeExecutor::requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

int FakeExecutor::calls() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(requests_.size());
}

std::shared_ptr<CallHandle> FakeExecutor::Implement(v1::ImplementRequest request, absl::Duration,
                                                    Callback<v1::ImplementResponse> done) {
  Handler handler;
  {
    absl::MutexLock lock(&mu_);
    requests_.push_back(request);
    handler = handler_;
  }
  return AnswerOrHold<v1::ImplementResponse>(
      hold_, held_, [handler, request] { return handler(request); }, std::move(done));
}

// ---------------------------------------------------------------------------------------------------------

std::shared_ptr<CallHandle> FakeMemory::QueryExperiences(v1::QueryExperiencesRequest request, absl::Duration,
                                                         Callback<v1::QueryExperiencesResponse> done) {
  v1::QueryExperiencesResponse response;
  {
    absl::MutexLock lock(&mu_);
    ++queries_;
    const auto& all = by_namespace_[request.namespace_()];
    // Newest first, at most `capacity` (FIFO eviction).
    for (auto it = all.rbegin(); it != all.rend() && response.experiences_size() < request.capacity(); ++it) {
      *response.add_experiences() = *it;
    }
  }
  std::move(done)(std::move(response));
  return std::make_shared<NoopHandle>();
}

std::shared_ptr<CallHandle> FakeMemory::SummarizeIteration(v1::SummarizeIterationRequest request, absl::Duration,
                                                           Callback<v1::SummarizeIterationResponse> done) {
  if (fail_summarize_) {
    {
      absl::MutexLock lock(&mu_);
      summarize_requests_.push_back(request);
    }
    std::move(done)(absl::UnavailableError("memory is down"));
    return std::make_shared<NoopHandle>();
  }
  v1::SummarizeIterationResponse response;
  {
    absl::MutexLock lock(&mu_);
    summarize_requests_.push_back(request);
    auto& stored = by_namespace_[request.namespace_()];
    for (const v1::SampleResult& s : request.samples()) {
      if (response.added_size() >= request.max_experiences()) break;
      if (s.result().verdict() != v1::VERDICT_OK) continue;
      const double speedup = s.parent_latency_ms() / s.result().latency().mean_ms();
      if (speedup <= request.positive_threshold()) continue;
      v1::Experience x;
      x.set_id(absl::StrCat(request.namespace_(), "-", stored.size()));
      x.set_namespace_(request.namespace_());
      x.set_title(absl::StrCat("faster by ", speedup));
      x.set_summary(s.plan().text());
      x.set_speedup(speedup);
      x.set_sequence(static_cast<int64_t>(stored.size()));
      stored.push_back(x);
      *response.add_added() = x;
    }
    response.mutable_usage()->set_prompt_tokens(50 * response.added_size());
  }
  std::move(done)(std::move(response));
  return std::make_shared<NoopHandle>();
}

std::vector<v1::SummarizeIterationRequest> FakeMemory::summarize_requests() const {
  absl::MutexLock lock(&mu_);
  return summarize_requests_;
}

std::vector<v1::Experience> FakeMemory::experiences(const std::string& ns) const {
  absl::MutexLock lock(&mu_);
  auto it = by_namespace_.find(ns);
  return it == by_namespace_.end() ? std::vector<v1::Experience>() : it->second;
}

int FakeMemory::queries() const {
  absl::MutexLock lock(&mu_);
  return queries_;
}

// ---------------------------------------------------------------------------------------------------------

int FakeProfilerPool::FreeSlots() const {
  absl::MutexLock lock(&mu_);
  return slots_ - in_flight_;
}

void FakeProfilerPool::SetCapacityListener(std::function<void()> listener) {
  absl::MutexLock lock(&mu_);
  listener_ = std::move(listener);
}

v1::ProfileResult FakeProfilerPool::Judge(const v1::ProfileRequest& request) const {
  v1::ProfileResult r;
  r.set_device(request.device());
  r.set_worker("fake");
  r.set_device_seconds(device_seconds_);
  const std::string& source = request.kernel().source();
  if (auto latency = FakeLatency(source); latency.has_value()) {
    {
      absl::MutexLock lock(&mu_);
      if (measured_sources_[source]++ > 0) *latency *= repeat_latency_factor_;
    }
    r.set_verdict(v1::VERDICT_OK);
    r.mutable_latency()->set_mean_ms(*latency);
    r.mutable_latency()->set_min_ms(*latency);
    r.mutable_latency()->set_max_ms(*latency);
    r.mutable_latency()->set_runs(10);
    if (peak_ms_ > 0) r.set_peak_percent(100.0 * peak_ms_ / *latency);
    return r;
  }
  constexpr absl::string_view kVerdict = "# verdict=";
  v1::Verdict verdict = v1::VERDICT_COMPILE_ERROR;
  if (source.rfind(kVerdict.data(), 0) == 0) {
    (void)v1::Verdict_Parse(
        absl::StrCat("VERDICT_", source.substr(kVerdict.size(), source.find('\n') - kVerdict.size())), &verdict);
  }
  r.set_verdict(verdict);
  r.set_message("judged by the fake profiler");
  return r;
}

void FakeProfilerPool::Completed(const std::string& candidate_id) {
  std::function<void()> listener;
  {
    absl::MutexLock lock(&mu_);
    --in_flight_;
    ++executions_[candidate_id];
    listener = listener_;
  }
  if (listener) listener();
}

std::shared_ptr<CallHandle> FakeProfilerPool::Profile(v1::ProfileRequest request, absl::Duration,
                                                      absl::AnyInvocable<void(ProfileOutcome) &&> done) {
  {
    absl::MutexLock lock(&mu_);
    ++in_flight_;
    order_.push_back(request.problem().name());
  }
  dispatched_.fetch_add(1);
  auto shared_done = std::make_shared<absl::AnyInvocable<void(ProfileOutcome) &&>>(std::move(done));
  auto answer = [this, request, shared_done](bool cancelled) {
    ProfileOutcome outcome;
    if (cancelled) {
      std::function<void()> listener;
      {
        absl::MutexLock lock(&mu_);
        --in_flight_;
        listener = listener_;
      }
      outcome.result = absl::CancelledError("cancelled");
      std::move (*shared_done)(std::move(outcome));
      if (listener) listener();
      return;
    }
    outcome.result = Judge(request);
    outcome.executions = 1;
    Completed(request.candidate_id());
    std::move (*shared_done)(std::move(outcome));
  };
  if (answered_.fetch_add(1) < hold_after_.load()) {
    answer(false);
    return std::make_shared<NoopHandle>();
  }
  return held_.Hold(answer);
}

std::vector<std::string> FakeProfilerPool::dispatch_order() const {
  absl::MutexLock lock(&mu_);
  return order_;
}

std::map<std::string, int> FakeProfilerPool::executions() const {
  absl::MutexLock lock(&mu_);
  return executions_;
}

}  // namespace accelopt::orchestrator::testing
