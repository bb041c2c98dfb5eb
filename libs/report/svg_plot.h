// Small deterministic SVG charts for self-contained HTML reports: no scripts, no external resources, numbers
// printed with fixed precision so that the same data always gives the same bytes.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace accelopt::report {

// Escapes & < > " ' for HTML text and attribute values.
std::string HtmlEscape(const std::string& text);

struct Point {
  double x = 0, y = 0;
};

struct Series {
  std::string label;
  std::string color;  // any CSS colour, e.g. "#1f77b4"
  std::vector<Point> points;
  bool line = true;      // joined by a line (step line when `step`)
  bool step = false;     // horizontal-then-vertical steps, for cumulative bests
  bool markers = true;   // a dot per point
  double opacity = 1.0;  // of the markers
};

struct LineChart {
  std::string title, x_label, y_label;
  std::vector<Series> series;
  // Horizontal reference line (e.g. the roofline latency), with its legend label.
  std::optional<double> reference_y;
  std::string reference_label;
  bool y_from_zero = true;
  int width = 640, height = 300;
};

// Renders an <svg class="chart"> element with axes, ticks, a legend and one <title> tooltip per marker.
// An empty chart (no points) renders with a "no data" note.
std::string RenderLineChart(const LineChart& chart);

struct BarStack {
  std::string label;           // x category, e.g. "it 3"
  std::vector<double> values;  // one per BarChart::segments entry
};

struct BarChart {
  std::string title, y_label;
  std::vector<std::string> segments;  // legend labels, in stacking order
  std::vector<std::string> colors;    // one per segment
  std::vector<BarStack> bars;
  int width = 640, height = 300;
};

// A chart with its titles and legend; bars are added by the caller.
BarChart MakeBarChart(std::string title, std::string y_label, std::vector<std::string> segments,
                      std::vector<std::string> colors);

// Renders stacked vertical bars with a legend.
std::string RenderBarChart(const BarChart& chart);

// Formats with up to `digits` significant digits, without exponent for ordinary magnitudes ("0.0123", "1.5k").
std::string ShortNumber(double value);

}  // namespace accelopt::report
