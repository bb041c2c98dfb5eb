#include "services/memory/builtin_summarizer.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace accelopt::memory {
namespace {

std::string Join(const std::vector<std::string>& lines, size_t from, size_t to, int max_lines) {
  std::vector<std::string> out;
  for (size_t i = from; i < to && static_cast<int>(out.size()) < max_lines; ++i) out.push_back(lines[i]);
  if (static_cast<int>(to - from) > max_lines) out.push_back("...");
  return absl::StrJoin(out, "\n");
}

// The plan's human sentence: the text after its `builtin:` line.
std::string PlanSentence(const v1::Plan& plan) {
  std::vector<std::string> rest;
  for (absl::string_view line : absl::StrSplit(plan.text(), '\n')) {
    if (!absl::StartsWith(absl::StripAsciiWhitespace(line), "builtin:") && !line.empty()) {
      rest.emplace_back(line);
    }
  }
  return absl::StrJoin(rest, " ");
}

}  // namespace

std::pair<std::string, std::string> ChangedLines(const std::string& before, const std::string& after, int max_lines) {
  std::vector<std::string> a = absl::StrSplit(before, '\n');
  std::vector<std::string> b = absl::StrSplit(after, '\n');
  size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) {
    ++tail;
  }
  return {Join(a, head, a.size() - tail, max_lines), Join(b, head, b.size() - tail, max_lines)};
}

absl::Status BuiltinSummarizer::ValidateSpec(const v1::ModelSpec& model) const { return absl::OkStatus(); }

void BuiltinSummarizer::Summarize(const SummaryInput& input, SummaryCallback done) {
  SummaryAnswer answer;
  SummaryOutput out;
  out.model = "builtin";
  out.transformation = input.plan.transformation();
  if (input.slow_kernel == input.fast_kernel) {
    out.no_optimization = true;
    answer.summary = std::move(out);
    done(std::move(answer));
    return;
  }
  const std::string what = out.transformation.empty() ? std::string("this rewrite") : out.transformation;
  const std::string sentence = PlanSentence(input.plan);
  // The pair is oriented slow -> fast; for a regression the fast kernel is the parent, so the change to
  // avoid is fast -> slow.
  auto [slow_lines, fast_lines] = ChangedLines(input.slow_kernel, input.fast_kernel, 12);
  if (input.regression) {
    out.title = absl::StrFormat("Avoid %s here: it made the kernel %.2fx slower", what, input.speedup);
    out.description =
        absl::StrCat("Applying ", what, " (", sentence.empty() ? input.plan.title() : sentence, ") to a ",
                     input.problem, " kernel slowed it down ", absl::StrFormat("%.2fx", input.speedup),
                     ". Prefer other transformations for kernels with the same bottleneck; undo it as shown.");
  } else {
    out.title = absl::StrFormat("%s: %.2fx faster", what, input.speedup);
    out.description = absl::StrCat(sentence.empty() ? input.plan.title() : sentence, ". On a ", input.problem,
                                   " kernel this gave ", absl::StrFormat("%.2fx", input.speedup),
                                   "; it pays off where the same pattern and bottleneck appear.");
  }
  out.before_snippet = slow_lines;
  out.after_snippet = fast_lines;
  out.summary = absl::StrCat("**", out.title, "**\n\n", out.description, "\n\nOriginal code:\n```python\n",
                             out.before_snippet, "\n```\n\nOptimized code:\n```python\n", out.after_snippet, "\n```\n");
  answer.summary = std::move(out);
  done(std::move(answer));
}

}  // namespace accelopt::memory
