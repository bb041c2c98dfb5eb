#include "libs/report/svg_plot.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace accelopt::report {
namespace {

constexpr int kLeft = 64, kRight = 16, kTop = 48, kBottom = 44;

// A "nice" tick step for the range, so ticks land on 1, 2 or 5 times a power of ten.
double NiceStep(double range, int target_ticks) {
  if (range <= 0) return 1;
  const double raw = range / target_ticks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double fraction = raw / magnitude;
  return magnitude * (fraction < 1.5 ? 1 : fraction < 3 ? 2 : fraction < 7 ? 5 : 10);
}

std::string Num(double v) { return absl::StrFormat("%.1f", v); }

struct Frame {
  double x0, x1, y0, y1;
  int width, height;
  double X(double x) const { return kLeft + (x - x0) / (x1 - x0) * (width - kLeft - kRight); }
  double Y(double y) const { return height - kBottom - (y - y0) / (y1 - y0) * (height - kTop - kBottom); }
};

std::string Open(int width, int height, const std::string& title) {
  return absl::StrFormat(
      "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
      "role=\"img\" aria-label=\"%s\">\n<text class=\"ctitle\" x=\"%d\" y=\"18\">%s</text>\n",
      width, height, width, height, HtmlEscape(title), kLeft, HtmlEscape(title));
}

// Axes, horizontal grid lines with y ticks, and the axis labels; x ticks are drawn by the caller.
std::string Axes(const Frame& f, const std::string& x_label, const std::string& y_label) {
  std::string out;
  const double step = NiceStep(f.y1 - f.y0, 5);
  for (double y = std::ceil(f.y0 / step) * step; y <= f.y1 + step * 1e-9; y += step) {
    absl::StrAppendFormat(&out, "<line class=\"grid\" x1=\"%d\" y1=\"%s\" x2=\"%d\" y2=\"%s\"/>\n", kLeft, Num(f.Y(y)),
                          f.width - kRight, Num(f.Y(y)));
    absl::StrAppendFormat(&out, "<text class=\"tick\" x=\"%d\" y=\"%s\" text-anchor=\"end\">%s</text>\n", kLeft - 6,
                          Num(f.Y(y) + 4), ShortNumber(y));
  }
  absl::StrAppendFormat(&out, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", kLeft,
                        f.height - kBottom, f.width - kRight, f.height - kBottom);
  absl::StrAppendFormat(&out, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", kLeft, kTop, kLeft,
                        f.height - kBottom);
  absl::StrAppendFormat(&out, "<text class=\"alabel\" x=\"%s\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                        Num((kLeft + f.width - kRight) / 2.0), f.height - 8, HtmlEscape(x_label));
  absl::StrAppendFormat(&out,
                        "<text class=\"alabel\" x=\"14\" y=\"%s\" text-anchor=\"middle\" "
                        "transform=\"rotate(-90 14 %s)\">%s</text>\n",
                        Num((kTop + f.height - kBottom) / 2.0), Num((kTop + f.height - kBottom) / 2.0),
                        HtmlEscape(y_label));
  return out;
}

// One row under the title, left to right; the last entry dashed when `dashed_last` (reference lines).
std::string Legend(const std::vector<std::pair<std::string, std::string>>& entries, bool dashed_last) {
  std::string out;
  double x = kLeft;
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& [label, color] = entries[i];
    const bool dashed = dashed_last && i + 1 == entries.size();
    absl::StrAppendFormat(&out,
                          "<line x1=\"%s\" y1=\"32\" x2=\"%s\" y2=\"32\" stroke=\"%s\" stroke-width=\"3\"%s/>"
                          "<text class=\"legend\" x=\"%s\" y=\"36\">%s</text>\n",
                          Num(x), Num(x + 16), color, dashed ? " stroke-dasharray=\"6 4\"" : "", Num(x + 20),
                          HtmlEscape(label));
    x += 6.2 * label.size() + 34;
  }
  return out;
}

}  // namespace

std::string HtmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string ShortNumber(double value) {
  const double a = std::fabs(value);
  if (a >= 1e9) return absl::StrFormat("%.3gG", value / 1e9);
  if (a >= 1e6) return absl::StrFormat("%.3gM", value / 1e6);
  if (a >= 1e3) return absl::StrFormat("%.3gk", value / 1e3);
  if (a == 0) return "0";
  return absl::StrFormat("%.3g", value);
}

std::string RenderLineChart(const LineChart& chart) {
  std::string out = Open(chart.width, chart.height, chart.title);
  double x0 = 1e300, x1 = -1e300, y0 = chart.y_from_zero ? 0 : 1e300, y1 = -1e300;
  for (const Series& s : chart.series) {
    for (const Point& p : s.points) {
      x0 = std::min(x0, p.x), x1 = std::max(x1, p.x), y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
    }
  }
  if (x0 > x1) {
    absl::StrAppendFormat(&out, "<text class=\"tick\" x=\"%d\" y=\"%d\">no data</text>\n</svg>\n", chart.width / 2,
                          chart.height / 2);
    return out;
  }
  if (chart.reference_y) y0 = std::min(y0, *chart.reference_y), y1 = std::max(y1, *chart.reference_y);
  if (x1 == x0) x0 -= 0.5, x1 += 0.5;
  const double pad = y1 > y0 ? (y1 - y0) * 0.08 : std::max(std::fabs(y1) * 0.1, 1.0);
  y1 += pad;
  if (!chart.y_from_zero || y0 < 0) y0 -= pad;
  const Frame f{x0 - (x1 - x0) * 0.03, x1 + (x1 - x0) * 0.03, y0, y1, chart.width, chart.height};
  out += Axes(f, chart.x_label, chart.y_label);
  const double xstep = std::max(1.0, NiceStep(x1 - x0, 10));
  for (double x = std::ceil(x0 / xstep) * xstep; x <= x1 + 1e-9; x += xstep) {
    absl::StrAppendFormat(&out, "<text class=\"tick\" x=\"%s\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                          Num(f.X(x)), chart.height - kBottom + 16, ShortNumber(x));
  }
  std::vector<std::pair<std::string, std::string>> legend;
  for (const Series& s : chart.series) {
    if (!s.label.empty()) legend.push_back({s.label, s.color});
    if (s.line && s.points.size() > 1) {
      std::string d;
      for (size_t i = 0; i < s.points.size(); ++i) {
        if (i > 0 && s.step) absl::StrAppend(&d, " L", Num(f.X(s.points[i].x)), " ", Num(f.Y(s.points[i - 1].y)));
        absl::StrAppend(&d, i == 0 ? "M" : " L", Num(f.X(s.points[i].x)), " ", Num(f.Y(s.points[i].y)));
      }
      absl::StrAppendFormat(&out, "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", d, s.color);
    }
    if (s.markers) {
      for (const Point& p : s.points) {
        absl::StrAppendFormat(&out,
                              "<circle cx=\"%s\" cy=\"%s\" r=\"3.5\" fill=\"%s\" fill-opacity=\"%.2f\">"
                              "<title>%s: x=%s, y=%s</title></circle>\n",
                              Num(f.X(p.x)), Num(f.Y(p.y)), s.color, s.opacity, HtmlEscape(s.label), ShortNumber(p.x),
                              ShortNumber(p.y));
      }
    }
  }
  if (chart.reference_y) {
    absl::StrAppendFormat(&out,
                          "<line class=\"roofline\" x1=\"%d\" y1=\"%s\" x2=\"%d\" y2=\"%s\" stroke=\"#d62728\" "
                          "stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\n",
                          kLeft, Num(f.Y(*chart.reference_y)), chart.width - kRight, Num(f.Y(*chart.reference_y)));
    legend.push_back({chart.reference_label, "#d62728"});
  }
  out += Legend(legend, chart.reference_y.has_value());
  out += "</svg>\n";
  return out;
}

std::string RenderBarChart(const BarChart& chart) {
  std::string out = Open(chart.width, chart.height, chart.title);
  double y1 = 0;
  for (const BarStack& b : chart.bars) {
    double total = 0;
    for (double v : b.values) total += v;
    y1 = std::max(y1, total);
  }
  if (chart.bars.empty() || y1 <= 0) {
    absl::StrAppendFormat(&out, "<text class=\"tick\" x=\"%d\" y=\"%d\">no data</text>\n</svg>\n", chart.width / 2,
                          chart.height / 2);
    return out;
  }
  const Frame f{0, 1, 0, y1 * 1.08, chart.width, chart.height};
  out += Axes(f, "", chart.y_label);
  const double slot = (chart.width - kLeft - kRight) / static_cast<double>(chart.bars.size());
  const double bar = std::min(48.0, slot * 0.7);
  const size_t label_every = std::max<size_t>(1, chart.bars.size() / 16);
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const double x = kLeft + slot * i + (slot - bar) / 2;
    double base = 0;
    for (size_t j = 0; j < chart.bars[i].values.size() && j < chart.colors.size(); ++j) {
      const double v = chart.bars[i].values[j];
      if (v <= 0) continue;
      absl::StrAppendFormat(&out,
                            "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"%s\"><title>%s, %s: %s</title>"
                            "</rect>\n",
                            Num(x), Num(f.Y(base + v)), Num(bar), Num(f.Y(base) - f.Y(base + v)), chart.colors[j],
                            HtmlEscape(chart.bars[i].label), HtmlEscape(chart.segments[j]), ShortNumber(v));
      base += v;
    }
    if (i % label_every == 0) {
      absl::StrAppendFormat(&out, "<text class=\"tick\" x=\"%s\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                            Num(x + bar / 2), chart.height - kBottom + 16, HtmlEscape(chart.bars[i].label));
    }
  }
  std::vector<std::pair<std::string, std::string>> legend;
  for (size_t j = 0; j < chart.segments.size() && j < chart.colors.size(); ++j) {
    legend.push_back({chart.segments[j], chart.colors[j]});
  }
  out += Legend(legend, false);
  out += "</svg>\n";
  return out;
}

BarChart MakeBarChart(std::string title, std::string y_label, std::vector<std::string> segments,
                      std::vector<std::string> colors) {
  BarChart chart;
  chart.title = std::move(title);
  chart.y_label = std::move(y_label);
  chart.segments = std::move(segments);
  chart.colors = std::move(colors);
  return chart;
}

}  // namespace accelopt::report
