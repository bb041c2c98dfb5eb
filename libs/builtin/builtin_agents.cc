#include "libs/builtin/builtin_agents.h"

#include <boost/asio/post.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libs/builtin/plan_ranking.h"
#include "libs/core/sha256.h"

namespace accelopt::builtin {
namespace {

// Cache entries kept before the analysis cache is cleared (kernels of one job iteration fit easily).
constexpr size_t kMaxCachedAnalyses = 512;

}  // namespace

std::string FindPlanLine(const std::string& plan_text) {
  for (absl::string_view line : absl::StrSplit(plan_text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::StartsWith(line, "builtin:")) return std::string(line);
  }
  return "";
}

BuiltinPlanner::BuiltinPlanner(std::shared_ptr<const Rewriter> rewriter, int threads)
    : rewriter_(std::move(rewriter)), pool_(threads) {}
BuiltinPlanner::~BuiltinPlanner() { pool_.join(); }

absl::Status BuiltinPlanner::ValidateSpec(const v1::ModelSpec& spec) const { return absl::OkStatus(); }

absl::StatusOr<std::vector<RewriteCandidate>> BuiltinPlanner::Analyze(const std::string& source) {
  const std::string key = core::Sha256Hex(source);
  std::shared_ptr<absl::StatusOr<std::vector<RewriteCandidate>>> entry;
  {
    absl::MutexLock lock(&mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) entry = it->second;
  }
  if (entry == nullptr) {
    // Concurrent samples of the same kernel may both analyse it once; the result is the same.
    entry = std::make_shared<absl::StatusOr<std::vector<RewriteCandidate>>>(rewriter_->Analyze(source));
    absl::MutexLock lock(&mu_);
    if (cache_.size() >= kMaxCachedAnalyses) cache_.clear();
    if (entry->ok()) cache_[key] = entry;  // a failed run may be transient: not cached
  }
  return *entry;
}

void BuiltinPlanner::Plan(std::shared_ptr<const v1::PlanRequest> request, int index, uint64_t seed,
                          absl::AnyInvocable<void(llm::Metered<llm::PlanDraft>)> done) {
  boost::asio::post(pool_, [this, request = std::move(request), index, done = std::move(done)]() mutable {
    llm::Metered<llm::PlanDraft> result;
    auto candidates = Analyze(request->kernel().source());
    if (!candidates.ok()) {
      result.value = absl::FailedPreconditionError(
          absl::StrCat("the builtin planner cannot analyse this kernel: ", candidates.status().message()));
      done(std::move(result));
      return;
    }
    std::vector<v1::Experience> experiences(request->experiences().begin(), request->experiences().end());
    // One ranking per request (its seed), so sample i takes the i-th plan and samples never repeat.
    std::vector<RankedCandidate> ranked = RankCandidates(*candidates, request->profile(), experiences, request->seed());
    if (index >= static_cast<int>(ranked.size())) {
      result.value = absl::NotFoundError(absl::StrCat("no further transformation applies: ", ranked.size(),
                                                      " applicable, this is sample ", index + 1));
      done(std::move(result));
      return;
    }
    const RankedCandidate& pick = ranked[index];
    llm::PlanDraft draft;
    draft.text = absl::StrCat(pick.candidate.plan_line, "\n", pick.candidate.description);
    draft.title = absl::StrCat(pick.candidate.transformation, " at ", pick.candidate.site);
    draft.transformation = pick.candidate.transformation;
    draft.reasoning = absl::StrFormat("ranked %d of %d (score %.2f, memory evidence %+.2f)", index + 1, ranked.size(),
                                      pick.score, pick.memory_evidence);
    result.value = std::move(draft);
    done(std::move(result));
  });
}

BuiltinExecutor::BuiltinExecutor(std::shared_ptr<const Rewriter> rewriter, int threads)
    : rewriter_(std::move(rewriter)), pool_(threads) {}
BuiltinExecutor::~BuiltinExecutor() { pool_.join(); }

absl::Status BuiltinExecutor::ValidateSpec(const v1::ModelSpec& spec) const { return absl::OkStatus(); }

void BuiltinExecutor::Implement(std::shared_ptr<const v1::ImplementRequest> request, int index, uint64_t seed,
                                absl::AnyInvocable<void(llm::Metered<llm::KernelDraft>)> done) {
  boost::asio::post(pool_, [this, request = std::move(request), done = std::move(done)]() mutable {
    llm::Metered<llm::KernelDraft> result;
    std::string line = FindPlanLine(request->plan().text());
    if (line.empty()) {
      result.value = absl::InvalidArgumentError(
          "the plan has no `builtin:` line; the builtin executor only applies plans of the builtin planner");
      done(std::move(result));
      return;
    }
    auto rewritten = rewriter_->Apply(request->kernel().source(), line);
    if (!rewritten.ok()) {
      result.value = rewritten.status();
    } else {
      result.value = llm::KernelDraft{rewritten->source, rewritten->description};
    }
    done(std::move(result));
  });
}

}  // namespace accelopt::builtin
