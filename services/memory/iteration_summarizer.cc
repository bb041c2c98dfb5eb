#include "services/memory/iteration_summarizer.h"

#include <atomic>
#include <boost/asio/post.hpp>
#include <cstdlib>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "libs/core/sha256.h"
#include "libs/core/splitmix64.h"
#include "libs/core/status_macros.h"
#include "libs/llm/completion.h"

namespace accelopt::memory {
namespace {

// A seed per pair from the request seed and the pair's experience id: stable across retries and builds.
uint64_t PairSeed(uint64_t seed, const std::string& id) {
  return core::SplitMix64(seed ^ std::strtoull(core::Sha256Hex(id).substr(0, 16).c_str(), nullptr, 16));
}

}  // namespace

absl::Status ValidateSummarizeRequest(const v1::SummarizeIterationRequest& request,
                                      const SummarizerRegistry& summarizers) {
  if (request.job_id().empty()) return absl::InvalidArgumentError("job_id: must not be empty");
  ACCELOPT_RETURN_IF_ERROR(ValidateNamespace(request.namespace_(), "namespace"));
  if (request.iteration() < 0) return absl::InvalidArgumentError("iteration: must not be negative");
  if (request.max_experiences() < 0) return absl::InvalidArgumentError("max_experiences: must not be negative");
  if (request.positive_threshold() != 0 && !(request.positive_threshold() >= 1.0)) {
    return absl::InvalidArgumentError("positive_threshold: must be 0 (default 1.04) or at least 1");
  }
  if (request.negative_threshold() != 0 && !(request.negative_threshold() >= 1.0)) {
    return absl::InvalidArgumentError("negative_threshold: must be 0 (default 1.15) or at least 1");
  }
  return summarizers.FindValid(request.model()).status();
}

std::string ExperienceId(const IterationKey& key, const std::string& candidate_id, bool regression) {
  std::string material = absl::StrCat(key.ns, "\n", key.job_id, "\n", key.iteration, "\n", candidate_id, "\n",
                                      regression ? "regression" : "improvement");
  return absl::StrCat("exp-", core::Sha256Hex(material).substr(0, 24));
}

// One Run in flight. `pairs` point into `request`.
struct IterationSummarizer::Call {
  v1::SummarizeIterationRequest request;
  IterationKey key;
  std::vector<SelectedPair> pairs;
  std::vector<std::string> ids;
  // The summarizer's prompt set, for the response.
  std::optional<v1::PromptSetUsed> prompts;
  Done done;
  absl::Mutex mu;
  // Per pair: an experience already stored, or the summarizer's answer.
  std::vector<std::optional<v1::Experience>> stored ABSL_GUARDED_BY(mu);
  std::vector<std::optional<SummaryAnswer>> answers ABSL_GUARDED_BY(mu);
  // Outstanding summaries plus one for the launching loop.
  std::atomic<int> pending{1};
};

IterationSummarizer::IterationSummarizer(ExperienceStore* store, const SummarizerRegistry* summarizers,
                                         MemoryMetrics* metrics, boost::asio::thread_pool* pool, Clock now)
    : store_(store), summarizers_(summarizers), metrics_(metrics), pool_(pool), now_(std::move(now)) {}

void IterationSummarizer::Run(v1::SummarizeIterationRequest request, Done done) {
  auto call = std::make_shared<Call>();
  call->request = std::move(request);
  call->key = {call->request.namespace_(), call->request.job_id(), call->request.iteration()};
  call->done = std::move(done);

  auto completed = store_->CompletedIteration(call->key);
  if (!completed.ok()) return call->done(completed.status());
  if (*completed) {
    v1::SummarizeIterationResponse response;
    for (auto& e : **completed) *response.add_added() = std::move(e);
    return call->done(std::move(response));
  }
  auto summarizer = summarizers_->Find(call->request.model().provider());
  if (!summarizer.ok()) return call->done(summarizer.status());
  call->prompts = (*summarizer)->PromptsFor(call->request.model());

  call->pairs = SelectPairs(call->request.samples(), SelectionParamsFrom(call->request));
  const size_t n = call->pairs.size();
  {
    absl::MutexLock lock(&call->mu);
    call->stored.resize(n);
    call->answers.resize(n);
  }
  for (size_t i = 0; i < n; ++i) {
    const SelectedPair& pair = call->pairs[i];
    call->ids.push_back(ExperienceId(call->key, pair.sample->candidate_id(), pair.regression));
  }
  for (size_t i = 0; i < n; ++i) {
    auto existing = store_->FindById(call->key.ns, call->ids[i]);
    if (!existing.ok()) return call->done(existing.status());
    if (*existing) {
      absl::MutexLock lock(&call->mu);
      call->stored[i] = std::move(**existing);
      continue;
    }
    const SelectedPair& pair = call->pairs[i];
    SummaryInput input;
    input.slow_kernel = pair.slow->source();
    input.fast_kernel = pair.fast->source();
    input.speedup = pair.speedup();
    input.regression = pair.regression;
    input.plan = pair.sample->plan();
    input.problem = call->request.problem().name();
    input.device = call->request.device();
    input.model = call->request.model();
    input.seed = PairSeed(call->request.seed(), call->ids[i]);
    call->pending.fetch_add(1);
    (*summarizer)->Summarize(input, [this, call, i](SummaryAnswer answer) {
      {
        absl::MutexLock lock(&call->mu);
        call->answers[i] = std::move(answer);
      }
      if (call->pending.fetch_sub(1) == 1) {
        boost::asio::post(*pool_, [this, call] {
          try {
            Finish(call);
          } catch (const std::exception& e) {
            call->done(absl::InternalError(absl::StrCat("storing the iteration's experiences: ", e.what())));
          }
        });
      }
    });
  }
  if (call->pending.fetch_sub(1) == 1) Finish(call);
}

void IterationSummarizer::Finish(const std::shared_ptr<Call>& call) {
  const v1::SummarizeIterationRequest& request = call->request;
  const std::string& provider = request.model().provider();
  v1::SummarizeIterationResponse response;
  if (call->prompts.has_value()) *response.mutable_prompts() = *call->prompts;
  std::vector<v1::Experience> experiences;
  std::vector<std::string> failures;
  const absl::Time now = now_();
  {
    absl::MutexLock lock(&call->mu);
    for (size_t i = 0; i < call->pairs.size(); ++i) {
      if (call->stored[i]) {
        experiences.push_back(*call->stored[i]);
        continue;
      }
      const SelectedPair& pair = call->pairs[i];
      const SummaryAnswer& answer = *call->answers[i];
      llm::AddUsage(answer.usage, response.mutable_usage());
      std::string what = absl::StrCat("candidate ", pair.sample->candidate_id(), " (plan ", pair.sample->plan_index(),
                                      ", sample ", pair.sample->sample_index(), ")");
      if (!answer.summary.ok()) {
        metrics_->RecordSummarizerCall(provider, "error");
        failures.push_back(absl::StrCat(what, ": ", answer.summary.status().ToString()));
        continue;
      }
      const SummaryOutput& summary = *answer.summary;
      if (summary.no_optimization) {
        metrics_->RecordSummarizerCall(provider, "no_optimization");
        continue;
      }
      if (summary.summary.empty()) {
        metrics_->RecordSummarizerCall(provider, "error");
        failures.push_back(absl::StrCat(what, ": the summarizer returned an empty summary"));
        continue;
      }
      metrics_->RecordSummarizerCall(provider, "ok");
      v1::Experience e;
      e.set_id(call->ids[i]);
      e.set_title(summary.title);
      e.set_description(summary.description);
      e.set_before_snippet(summary.before_snippet);
      e.set_after_snippet(summary.after_snippet);
      e.set_speedup(pair.speedup());
      e.set_regression(pair.regression);
      e.set_summary(summary.summary);
      e.set_transformation(summary.transformation.empty() ? pair.sample->plan().transformation()
                                                          : summary.transformation);
      v1::Provenance* p = e.mutable_provenance();
      p->set_job_id(request.job_id());
      p->set_problem(request.problem().name());
      p->set_device(request.device());
      p->set_model(summary.model.empty() ? request.model().model() : summary.model);
      p->mutable_created_at()->set_seconds(absl::ToUnixSeconds(now));
      p->mutable_created_at()->set_nanos(
          static_cast<int32_t>(absl::ToInt64Nanoseconds(now - absl::FromUnixSeconds(absl::ToUnixSeconds(now)))));
      p->set_candidate_id(pair.sample->candidate_id());
      p->set_iteration(request.iteration());
      experiences.push_back(std::move(e));
    }
  }
  const bool complete = failures.empty();
  auto stored = store_->AppendIteration(call->key, std::move(experiences), complete);
  if (!stored.ok()) return call->done(stored.status());
  metrics_->RecordStored(call->key.ns, call->key.job_id, stored->written);
  metrics_->experiences.Set(static_cast<double>(store_->Count()));
  for (auto& e : stored->experiences) *response.add_added() = std::move(e);
  for (auto& f : failures) response.add_failures(std::move(f));
  call->done(std::move(response));
}

}  // namespace accelopt::memory
