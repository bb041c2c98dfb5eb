#include "services/memory/prompted_summarizer.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "libs/llm/prompted_agents.h"
#include "libs/llm/text_extract.h"

namespace accelopt::memory {
namespace {

constexpr absl::string_view kNoOptimization = "No optimization found";
constexpr absl::string_view kOriginalHeading = "Original code";
constexpr absl::string_view kOptimizedHeading = "Optimized code";

// The first fenced block after `heading`, or empty.
std::string BlockAfter(absl::string_view text, absl::string_view heading) {
  size_t at = text.find(heading);
  if (at == absl::string_view::npos) return "";
  absl::StatusOr<std::string> block = llm::FirstFencedBlock(text.substr(at + heading.size()));
  return block.ok() ? *std::move(block) : "";
}

}  // namespace

SummaryOutput ParseSummaryAnswer(absl::string_view answer) {
  SummaryOutput out;
  absl::string_view text = absl::StripAsciiWhitespace(answer);
  if (text.find(kNoOptimization) != absl::string_view::npos) {
    out.no_optimization = true;
    return out;
  }
  out.summary = std::string(text);
  out.title = llm::PlanTitle(text);
  out.before_snippet = BlockAfter(text, kOriginalHeading);
  out.after_snippet = BlockAfter(text, kOptimizedHeading);
  absl::string_view body = text.substr(0, text.find(kOriginalHeading));
  size_t title_end = body.find('\n');
  body = title_end == absl::string_view::npos ? absl::string_view() : body.substr(title_end + 1);
  out.description = std::string(absl::StripAsciiWhitespace(body));
  return out;
}

absl::Status PromptedSummarizer::ValidateSpec(const v1::ModelSpec& model) const {
  return llm::ValidatePromptedSpec(model, provider_, prompts_, {"summarizer_system", "summarizer_user"});
}

std::optional<v1::PromptSetUsed> PromptedSummarizer::PromptsFor(const v1::ModelSpec& model) const {
  absl::StatusOr<v1::PromptSetUsed> used =
      prompts_.Fingerprint(model.prompt_set(), {"summarizer_system", "summarizer_user"});
  if (!used.ok()) return std::nullopt;
  return *std::move(used);
}

void PromptedSummarizer::Summarize(const SummaryInput& input, SummaryCallback done) {
  const v1::ModelSpec& spec = input.model;
  absl::StatusOr<std::string> system = prompts_.Render(spec.prompt_set(), "summarizer_system", {});
  absl::StatusOr<std::string> user = prompts_.Render(spec.prompt_set(), "summarizer_user",
                                                     {{"slow_kernel", input.slow_kernel},
                                                      {"fast_kernel", input.fast_kernel},
                                                      {"speedup", absl::StrFormat("%.3f", input.speedup)}});
  if (!system.ok() || !user.ok()) {
    done(SummaryAnswer{system.ok() ? user.status() : system.status(), {}});
    return;
  }
  provider_.Complete(llm::CompletionRequest{"summarizer", spec, *std::move(system), *std::move(user), input.seed},
                     [done = std::move(done), model = spec.model()](llm::Metered<llm::Completion> completion) {
                       SummaryAnswer answer{absl::UnknownError(""), completion.usage};
                       if (!completion.value.ok()) {
                         answer.summary = completion.value.status();
                       } else if (absl::StripAsciiWhitespace(completion.value->text).empty()) {
                         answer.summary = absl::DataLossError("the model returned an empty summary");
                       } else {
                         SummaryOutput out = ParseSummaryAnswer(completion.value->text);
                         out.model = model;
                         answer.summary = std::move(out);
                       }
                       done(std::move(answer));
                     });
}

}  // namespace accelopt::memory
