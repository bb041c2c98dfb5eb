#include "libs/llm/completion.h"

namespace accelopt::llm {

void AddUsage(const v1::TokenUsage& from, v1::TokenUsage* into) {
  into->set_prompt_tokens(into->prompt_tokens() + from.prompt_tokens());
  into->set_completion_tokens(into->completion_tokens() + from.completion_tokens());
  into->set_reasoning_tokens(into->reasoning_tokens() + from.reasoning_tokens());
  into->set_cost_usd(into->cost_usd() + from.cost_usd());
  into->set_requests(into->requests() + from.requests());
  into->set_retries(into->retries() + from.retries());
}

}  // namespace accelopt::llm
