#include "services/memory/fake_summarizer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace accelopt::memory {
namespace {

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

absl::Status FakeSummarizer::ValidateSpec(const v1::ModelSpec&) const { return absl::OkStatus(); }

void FakeSummarizer::Summarize(const SummaryInput& input, SummaryCallback done) {
  SummaryAnswer answer;
  answer.usage.set_requests(1);
  answer.usage.set_prompt_tokens(static_cast<int64_t>(input.slow_kernel.size() + input.fast_kernel.size()) / 4);
  SummaryOutput out;
  out.model = "fake";
  if (input.slow_kernel == input.fast_kernel) {
    out.no_optimization = true;
    answer.summary = std::move(out);
    done(std::move(answer));
    return;
  }
  out.title = input.plan.title().empty() ? "Rewrite" : input.plan.title();
  out.transformation = input.plan.transformation();
  out.description = absl::StrFormat("Apply the change that made the kernel %.3fx faster%s.", input.speedup,
                                    input.regression ? " (learned from a regression: undo it)" : "");
  out.before_snippet = FirstLine(input.slow_kernel);
  out.after_snippet = FirstLine(input.fast_kernel);
  out.summary = absl::StrCat("**", out.title, "**\n", out.description, "\nOriginal code:\n```python\n",
                             out.before_snippet, "\n```\nOptimized code:\n```python\n", out.after_snippet, "\n```\n");
  answer.usage.set_completion_tokens(static_cast<int64_t>(out.summary.size()) / 4);
  answer.summary = std::move(out);
  done(std::move(answer));
}

}  // namespace accelopt::memory
