#include "libs/config/arithmetic.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace accelopt::config {
namespace {

// Recursive-descent parser: sum := product (('+'|'-') product)*; product := unary (('*'|'/'|'//') unary)*;
// unary := ('+'|'-') unary | power; power := atom ('**' unary)?; atom := number | name | '(' sum ')'.
class Parser {
 public:
  Parser(std::string_view text, const std::map<std::string, double>& names) : text_(text), names_(names) {}

  absl::StatusOr<double> Parse() {
    auto value = Sum();
    if (!value.ok()) return value;
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected character");
    if (!std::isfinite(*value)) return absl::InvalidArgumentError(absl::StrCat("'", text_, "' is not finite"));
    return value;
  }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Accept(std::string_view token) {
    SkipSpace();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat("cannot evaluate '", text_, "': ", what, " at position ", pos_));
  }

  absl::StatusOr<double> Sum() {
    auto left = Product();
    while (left.ok()) {
      int sign = Accept("+") ? 1 : Accept("-") ? -1 : 0;
      if (sign == 0) break;
      auto right = Product();
      if (!right.ok()) return right;
      left = *left + sign * *right;
    }
    return left;
  }

  absl::StatusOr<double> Product() {
    auto left = Unary();
    while (left.ok()) {
      SkipSpace();
      if (text_.substr(pos_, 2) == "**") break;
      const bool floor_div = Accept("//");
      const bool div = floor_div || Accept("/");
      if (!div && !Accept("*")) break;
      auto right = Unary();
      if (!right.ok()) return right;
      if (div && *right == 0) return Error("division by zero");
      left = !div ? *left * *right : floor_div ? std::floor(*left / *right) : *left / *right;
    }
    return left;
  }

  absl::StatusOr<double> Unary() {
    if (Accept("-")) {
      auto v = Unary();
      return v.ok() ? absl::StatusOr<double>(-*v) : v;
    }
    if (Accept("+")) return Unary();
    return Power();
  }

  absl::StatusOr<double> Power() {
    auto base = Atom();
    if (!base.ok() || !Accept("**")) return base;
    auto exponent = Unary();
    if (!exponent.ok()) return exponent;
    return std::pow(*base, *exponent);
  }

  absl::StatusOr<double> Atom() {
    if (Accept("(")) {
      auto inner = Sum();
      if (!inner.ok()) return inner;
      if (!Accept(")")) return Error("missing ')'");
      return inner;
    }
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end");
    const char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const std::string rest(text_.substr(pos_));
      char* end = nullptr;
      const double value = std::strtod(rest.c_str(), &end);
      if (end == rest.c_str()) return Error("bad number");
      pos_ += end - rest.c_str();
      return value;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t end = pos_;
      while (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_')) ++end;
      const std::string name(text_.substr(pos_, end - pos_));
      auto it = names_.find(name);
      if (it == names_.end()) {
        return absl::InvalidArgumentError(absl::StrCat("cannot evaluate '", text_, "': unknown name '", name, "'"));
      }
      pos_ = end;
      return it->second;
    }
    return Error("unexpected character");
  }

  std::string text_;
  const std::map<std::string, double>& names_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<double> EvaluateArithmetic(std::string_view expression, const std::map<std::string, double>& names) {
  return Parser(expression, names).Parse();
}

}  // namespace accelopt::config
