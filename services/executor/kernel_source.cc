#include "services/executor/kernel_source.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace accelopt::executor {
namespace {

constexpr std::pair<const char*, const char*> kStandardImports[] = {
    {"np", "import numpy as np"},
    {"nki", "import neuronxcc.nki as nki"},
    {"nl", "import neuronxcc.nki.language as nl"},
    {"nisa", "import neuronxcc.nki.isa as nisa"},
    {"nt", "import neuronxcc.nki.typing as nt"},
    {"trace", "from neuronxcc.nki import trace"},
    {"par_dim", "from neuronxcc.nki.language import par_dim"},
};

// The name one "a.b.c as x" / "a.b" / "x" item binds.
std::string BoundName(absl::string_view item, bool from_import) {
  item = absl::StripAsciiWhitespace(item);
  std::vector<absl::string_view> words = absl::StrSplit(item, ' ', absl::SkipWhitespace());
  if (words.empty()) return "";
  if (words.size() >= 3 && words[words.size() - 2] == "as") return std::string(words.back());
  absl::string_view name = words[0];
  if (!from_import) name = name.substr(0, name.find('.'));
  return std::string(name);
}

// Names bound by top-level import statements (parenthesised multi-line `from` imports included).
absl::flat_hash_set<std::string> ImportedNames(absl::string_view code) {
  absl::flat_hash_set<std::string> names;
  std::vector<absl::string_view> lines = absl::StrSplit(code, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    absl::string_view line = lines[i];
    if (absl::ConsumePrefix(&line, "import ")) {
      for (absl::string_view item : absl::StrSplit(line.substr(0, line.find('#')), ',')) {
        names.insert(BoundName(item, false));
      }
    } else if (absl::StartsWith(line, "from ")) {
      size_t at = line.find(" import ");
      if (at == absl::string_view::npos) continue;
      std::string items(line.substr(at + 8));
      if (absl::StrContains(items, "(")) {
        while (!absl::StrContains(items, ")") && i + 1 < lines.size()) absl::StrAppend(&items, " ", lines[++i]);
      }
      absl::RemoveExtraAsciiWhitespace(&items);
      for (absl::string_view item : absl::StrSplit(items, absl::ByAnyChar(",()"))) {
        item = item.substr(0, item.find('#'));
        if (!absl::StripAsciiWhitespace(item).empty()) names.insert(BoundName(item, true));
      }
    }
  }
  return names;
}

}  // namespace

std::string PrependStandardImports(absl::string_view code) {
  absl::flat_hash_set<std::string> present = ImportedNames(code);
  std::string header;
  for (const auto& [name, line] : kStandardImports) {
    if (!present.contains(name)) absl::StrAppend(&header, line, "\n");
  }
  if (header.empty()) return std::string(code);
  // `from __future__` imports must stay first.
  size_t insert_at = 0;
  size_t pos = 0;
  while (pos < code.size()) {
    size_t end = code.find('\n', pos);
    absl::string_view line = code.substr(pos, end == absl::string_view::npos ? absl::string_view::npos : end - pos);
    if (absl::StartsWith(line, "from __future__ ")) insert_at = end == absl::string_view::npos ? code.size() : end + 1;
    if (end == absl::string_view::npos) break;
    pos = end + 1;
  }
  std::string prefix(code.substr(0, insert_at));
  if (!prefix.empty() && prefix.back() != '\n') prefix += '\n';
  return absl::StrCat(prefix, header, "\n", code.substr(insert_at));
}

bool DefinesKernelFunction(absl::string_view code) {
  for (absl::string_view line : absl::StrSplit(code, '\n')) {
    if (!absl::ConsumePrefix(&line, "def ")) continue;
    line = absl::StripLeadingAsciiWhitespace(line);
    for (absl::string_view name : {"kernel", "optimized_kernel"}) {
      absl::string_view rest = line;
      if (absl::ConsumePrefix(&rest, name) && absl::StartsWith(absl::StripLeadingAsciiWhitespace(rest), "(")) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace accelopt::executor
