//! Hand-drawn SVG charts: lines over a linear or logarithmic x axis
//! (`LineChart`) and grouped or stacked bars (`BarChart`), with axes, ticks
//! and a legend. Output is plain text with fixed-precision coordinates, so a
//! chart is byte-identical whenever its data is.
//!
//! Which charts a report or an experiment draws is theirs to decide.

use std::fmt::Write as _;

const WIDTH: f64 = 860.0;
const HEIGHT: f64 = 440.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 230.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 55.0;

/// Colours for series, by index (a colour-blind-safe palette).
const PALETTE: [&str; 10] = [
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#f0e442", "#000000",
    "#999999", "#882255",
];

/// One line of a line chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Legend text.
    pub name: String,
    /// (x, y) points in data units, in x order.
    pub points: Vec<(f64, f64)>,
    /// Palette index.
    pub color: usize,
    /// Dashed (for targets such as fair shares).
    pub dashed: bool,
    /// Dotted (for a second kind of target); wins over `dashed`.
    pub dotted: bool,
    /// Draw steps (value holds until the next point) instead of slopes.
    pub step: bool,
    /// Mark each point.
    pub markers: bool,
}

impl Line {
    /// A solid line.
    pub fn new(name: impl Into<String>, color: usize, points: Vec<(f64, f64)>) -> Line {
        Line {
            name: name.into(),
            points,
            color,
            dashed: false,
            dotted: false,
            step: false,
            markers: false,
        }
    }
}

/// A chart of lines.
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    /// Title.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Logarithmic x axis (non-positive x values are dropped).
    pub x_log: bool,
    /// Fixed y range top (default: the data's maximum, rounded up).
    pub y_max: Option<f64>,
    /// The lines.
    pub lines: Vec<Line>,
}

/// One series of a bar chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Bars {
    /// Legend text.
    pub name: String,
    /// One value per category.
    pub values: Vec<f64>,
    /// Palette index.
    pub color: usize,
}

/// A chart of bars by category.
#[derive(Clone, Debug, PartialEq)]
pub struct BarChart {
    /// Title.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Category labels.
    pub categories: Vec<String>,
    /// The series.
    pub series: Vec<Bars>,
    /// Stack the series instead of grouping them.
    pub stacked: bool,
    /// Fixed y range top.
    pub y_max: Option<f64>,
}

fn f(x: f64) -> String {
    format!("{x:.1}")
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Tick values: about `n` "nice" steps from 0 (or `lo`) to `hi`.
fn nice_ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() * step;
    let mut out = Vec::new();
    let mut k = 0;
    loop {
        let v = first + step * f64::from(k);
        if v > hi + step * 1e-9 {
            break;
        }
        out.push(v);
        k += 1;
    }
    out
}

/// A tick label without needless decimals.
fn label(v: f64) -> String {
    if v == 0.0 {
        return "0".to_owned();
    }
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Horizontal grid lines at round values up to `ymax`, labelled on the left.
fn y_grid(out: &mut String, ymax: f64, x0: f64, x1: f64, sy: impl Fn(f64) -> f64) {
    for t in nice_ticks(0.0, ymax, 5) {
        let _ = writeln!(
            out,
            r##"<path d="M{} {}H{}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
            f(x0),
            f(sy(t)),
            f(x1),
            f(x0 - 6.0),
            f(sy(t) + 4.0),
            label(t)
        );
    }
}
fn header(out: &mut String, title: &str) {
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#,
        w = WIDTH,
        h = HEIGHT
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="24" font-size="15" text-anchor="middle">{}</text>"#,
        f((LEFT + WIDTH - RIGHT) / 2.0),
        escape(title)
    );
}

fn axes(out: &mut String, x_label: &str, y_label: &str) {
    let (x0, x1, y0, y1) = (LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP);
    let _ = writeln!(
        out,
        r#"<path d="M{} {}V{}H{}" fill="none" stroke="black"/>"#,
        f(x0),
        f(y1),
        f(y0),
        f(x1)
    );
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        f((x0 + x1) / 2.0),
        f(HEIGHT - 14.0),
        escape(x_label)
    );
    let _ = writeln!(
        out,
        r#"<text x="18" y="{}" text-anchor="middle" transform="rotate(-90 18 {})">{}</text>"#,
        f((y0 + y1) / 2.0),
        f((y0 + y1) / 2.0),
        escape(y_label)
    );
}

/// How a legend entry's line is drawn.
#[derive(Clone, Copy)]
enum Stroke {
    Solid,
    Dashed,
    Dotted,
}

fn legend(out: &mut String, entries: &[(String, usize, Stroke)]) {
    let x = WIDTH - RIGHT + 16.0;
    for (i, (name, color, stroke)) in entries.iter().enumerate() {
        let y = TOP + 10.0 + 18.0 * i as f64;
        let dash = match stroke {
            Stroke::Solid => "",
            Stroke::Dashed => r#" stroke-dasharray="5 3""#,
            Stroke::Dotted => r#" stroke-dasharray="2 3""#,
        };
        let _ = writeln!(
            out,
            r#"<path d="M{} {}h22" stroke="{}" stroke-width="2"{dash}/>"#,
            f(x),
            f(y),
            PALETTE[color % PALETTE.len()]
        );
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}">{}</text>"#,
            f(x + 28.0),
            f(y + 4.0),
            escape(name)
        );
    }
}

impl LineChart {
    /// The SVG text.
    pub fn render(&self) -> String {
        let tx = |x: f64| if self.x_log { x.log10() } else { x };
        let pts: Vec<Vec<(f64, f64)>> = self
            .lines
            .iter()
            .map(|l| {
                l.points
                    .iter()
                    .filter(|(x, y)| x.is_finite() && y.is_finite() && (!self.x_log || *x > 0.0))
                    .map(|(x, y)| (tx(*x), *y))
                    .collect()
            })
            .collect();
        let all = pts.iter().flatten();
        let (mut xmin, mut xmax) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut ymax: f64 = 0.0;
        for (x, y) in all {
            xmin = xmin.min(*x);
            xmax = xmax.max(*x);
            ymax = ymax.max(*y);
        }
        if !xmin.is_finite() {
            (xmin, xmax) = (0.0, 1.0);
        }
        if !self.x_log {
            xmin = xmin.min(0.0);
        } else {
            xmin = xmin.floor();
            xmax = xmax.ceil().max(xmin + 1.0);
        }
        if xmax <= xmin {
            xmax = xmin + 1.0;
        }
        let ymax = self.y_max.unwrap_or_else(|| {
            let t = nice_ticks(0.0, ymax.max(1e-9), 5);
            t.last().copied().unwrap_or(1.0).max(ymax)
        });
        let ymax = if ymax > 0.0 { ymax } else { 1.0 };
        let (x0, x1, y0, y1) = (LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP);
        let sx = |x: f64| x0 + (x - xmin) / (xmax - xmin) * (x1 - x0);
        let sy = |y: f64| y0 - (y / ymax).clamp(0.0, 1.05) * (y0 - y1);
        let mut out = String::new();
        header(&mut out, &self.title);
        y_grid(&mut out, ymax, x0, x1, sy);
        let xticks: Vec<(f64, String)> = if self.x_log {
            (xmin as i32..=xmax as i32)
                .map(|e| (f64::from(e), label(10f64.powi(e))))
                .collect()
        } else {
            nice_ticks(xmin, xmax, 8)
                .into_iter()
                .map(|t| (t, label(t)))
                .collect()
        };
        for (t, text) in xticks {
            let _ = writeln!(
                out,
                r#"<path d="M{} {}v5" stroke="black"/><text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                f(sx(t)),
                f(y0),
                f(sx(t)),
                f(y0 + 18.0),
                text
            );
        }
        axes(&mut out, &self.x_label, &self.y_label);
        for (line, points) in self.lines.iter().zip(&pts) {
            if points.is_empty() {
                continue;
            }
            let color = PALETTE[line.color % PALETTE.len()];
            let mut d = String::new();
            let mut prev_y = None;
            for (i, (x, y)) in points.iter().enumerate() {
                if i == 0 {
                    let _ = write!(d, "M{} {}", f(sx(*x)), f(sy(*y)));
                } else {
                    if line.step {
                        let _ = write!(d, "H{}", f(sx(*x)));
                        if prev_y != Some(*y) {
                            let _ = write!(d, "V{}", f(sy(*y)));
                        }
                    } else {
                        let _ = write!(d, "L{} {}", f(sx(*x)), f(sy(*y)));
                    }
                }
                prev_y = Some(*y);
            }
            let dash = if line.dotted {
                r#" stroke-dasharray="2 3""#
            } else if line.dashed {
                r#" stroke-dasharray="6 4""#
            } else {
                ""
            };
            let _ = writeln!(
                out,
                r#"<path d="{d}" fill="none" stroke="{color}" stroke-width="2"{dash}/>"#
            );
            if line.markers {
                for (x, y) in points {
                    let _ = writeln!(
                        out,
                        r#"<circle cx="{}" cy="{}" r="3.5" fill="{color}"/>"#,
                        f(sx(*x)),
                        f(sy(*y))
                    );
                }
            }
        }
        let entries: Vec<(String, usize, Stroke)> = self
            .lines
            .iter()
            .map(|l| {
                let stroke = if l.dotted {
                    Stroke::Dotted
                } else if l.dashed {
                    Stroke::Dashed
                } else {
                    Stroke::Solid
                };
                (l.name.clone(), l.color, stroke)
            })
            .collect();
        legend(&mut out, &entries);
        out.push_str("</svg>\n");
        out
    }
}

impl BarChart {
    /// The SVG text.
    pub fn render(&self) -> String {
        let n_cat = self.categories.len().max(1);
        let totals: Vec<f64> = (0..n_cat)
            .map(|c| {
                let vals = self
                    .series
                    .iter()
                    .map(|s| s.values.get(c).copied().unwrap_or(0.0));
                if self.stacked {
                    vals.sum()
                } else {
                    vals.fold(0.0, f64::max)
                }
            })
            .collect();
        let data_max = totals.iter().copied().fold(0.0, f64::max);
        let ymax = self.y_max.unwrap_or_else(|| {
            nice_ticks(0.0, data_max.max(1e-9), 5)
                .last()
                .copied()
                .unwrap_or(1.0)
                .max(data_max)
        });
        let ymax = if ymax > 0.0 { ymax } else { 1.0 };
        let (x0, x1, y0, y1) = (LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP);
        let sy = |y: f64| y0 - (y / ymax).clamp(0.0, 1.05) * (y0 - y1);
        let slot = (x1 - x0) / n_cat as f64;
        let mut out = String::new();
        header(&mut out, &self.title);
        y_grid(&mut out, ymax, x0, x1, sy);
        let n_series = self.series.len().max(1);
        for (c, cat) in self.categories.iter().enumerate() {
            let left = x0 + slot * c as f64 + slot * 0.12;
            let width = slot * 0.76;
            let mut stack = 0.0;
            for (si, s) in self.series.iter().enumerate() {
                let v = s.values.get(c).copied().unwrap_or(0.0);
                if !v.is_finite() || v <= 0.0 {
                    continue;
                }
                let color = PALETTE[s.color % PALETTE.len()];
                let (bx, bw, top, bottom) = if self.stacked {
                    let r = (left, width, sy(stack + v), sy(stack));
                    stack += v;
                    r
                } else {
                    let w = width / n_series as f64;
                    (left + w * si as f64, w, sy(v), sy(0.0))
                };
                let _ = writeln!(
                    out,
                    r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{color}"/>"#,
                    f(bx),
                    f(top),
                    f(bw.max(0.5)),
                    f((bottom - top).max(0.0))
                );
            }
            let _ = writeln!(
                out,
                r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                f(x0 + slot * (c as f64 + 0.5)),
                f(y0 + 18.0),
                escape(cat)
            );
        }
        axes(&mut out, &self.x_label, &self.y_label);
        let entries: Vec<(String, usize, Stroke)> = self
            .series
            .iter()
            .map(|s| (s.name.clone(), s.color, Stroke::Solid))
            .collect();
        legend(&mut out, &entries);
        out.push_str("</svg>\n");
        out
    }
}

/// Keeps at most `max` points of a series (evenly spaced, always the last),
/// so long runs draw quickly.
pub fn thin(points: Vec<(f64, f64)>, max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max || max < 2 {
        return points;
    }
    let step = points.len().div_ceil(max);
    let last = *points.last().expect("non-empty");
    let mut out: Vec<(f64, f64)> = points.into_iter().step_by(step).collect();
    if out.last() != Some(&last) {
        out.push(last);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_nice() {
        assert_eq!(
            nice_ticks(0.0, 100.0, 5),
            [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(nice_ticks(0.0, 1.0, 4), [0.0, 0.25, 0.5, 0.75, 1.0]);
        assert_eq!(label(2500.0), "2500");
        assert_eq!(label(25_000.0), "25k");
        assert_eq!(label(0.25), "0.25");
    }

    #[test]
    fn charts_render_their_data_and_nothing_else() {
        let chart = LineChart {
            title: "a <b>".into(),
            x_label: "t".into(),
            y_label: "y".into(),
            x_log: false,
            y_max: Some(1.0),
            lines: vec![Line {
                dashed: true,
                step: true,
                ..Line::new("q", 1, vec![(0.0, 0.0), (10.0, 0.5), (20.0, 0.5)])
            }],
        };
        let svg = chart.render();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("a &lt;b&gt;"));
        assert!(svg.contains(r#"stroke-dasharray="6 4""#));
        assert_eq!(svg, chart.render(), "rendering is deterministic");
        let bars = BarChart {
            title: "b".into(),
            x_label: "bin".into(),
            y_label: "%".into(),
            categories: vec!["1".into(), "2".into()],
            series: vec![
                Bars {
                    name: "node".into(),
                    values: vec![10.0, 90.0],
                    color: 0,
                },
                Bars {
                    name: "rack".into(),
                    values: vec![90.0, 10.0],
                    color: 1,
                },
            ],
            stacked: true,
            y_max: Some(100.0),
        };
        let svg = bars.render();
        assert_eq!(svg.matches("<rect").count(), 1 + 4);
        assert!(svg.ends_with("</svg>\n"));
    }

    #[test]
    fn thinning_keeps_the_ends() {
        let pts: Vec<(f64, f64)> = (0..1000).map(|i| (f64::from(i), 0.0)).collect();
        let t = thin(pts, 100);
        assert!(t.len() <= 101);
        assert_eq!(t[0].0, 0.0);
        assert_eq!(t.last().unwrap().0, 999.0);
    }
}
