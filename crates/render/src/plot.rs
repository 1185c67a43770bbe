//! [`LineChart`]: a titled chart of one or more [`Series`] of `(x, y)`
//! points against linear axes with round-numbered ticks, drawn onto a
//! [`Canvas`] (for PNG) or written as SVG text. Both outputs come from one
//! layout ([`Layout`]), so they show the same chart.
//!
//! The axes start at zero unless the data goes below it; tick steps are 1,
//! 2 or 5 times a power of ten, about six to an axis. A series is drawn as
//! straight segments with a square marker at each point, or as steps (a
//! value held until the next point) for quantities that change in jumps,
//! such as a playout delay in frames.

use std::fmt::Write as _;

use crate::canvas::{Canvas, Rgb};
use crate::font;

/// One line of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Its name in the legend.
    pub name: String,
    /// Its colour.
    pub colour: Rgb,
    /// Its points, in the order they are joined.
    pub points: Vec<(f64, f64)>,
    /// Joined as steps (each value held until the next point's x) rather
    /// than straight lines, and without markers.
    pub steps: bool,
}

/// A line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// The title, above the chart.
    pub title: String,
    /// The x axis' label.
    pub x_label: String,
    /// The y axis' label.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
}

const INK: Rgb = Rgb(40, 44, 52);
const RULE: Rgb = Rgb(222, 226, 232);
const PAPER: Rgb = Rgb(255, 255, 255);

/// Where everything of a chart goes on a `width × height` picture.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// The plotting area: left, top, right, bottom (pixels).
    pub area: [f64; 4],
    /// The data range shown: x from, x to, y from, y to.
    pub range: [f64; 4],
    /// Tick values on x.
    pub x_ticks: Vec<f64>,
    /// Tick values on y.
    pub y_ticks: Vec<f64>,
    /// The font scale of the labels.
    pub scale: u32,
}

impl Layout {
    /// The pixel position of data point `(x, y)`.
    pub fn to_pixel(&self, x: f64, y: f64) -> (f64, f64) {
        let [l, t, r, b] = self.area;
        let [x0, x1, y0, y1] = self.range;
        (
            l + (x - x0) / (x1 - x0) * (r - l),
            b - (y - y0) / (y1 - y0) * (b - t),
        )
    }
}

/// Round tick values covering `[lo, hi]`, about `count` of them, and the
/// range they span.
fn ticks(lo: f64, hi: f64, count: f64) -> (Vec<f64>, f64, f64) {
    let (lo, hi) = if hi > lo { (lo, hi) } else { (lo, lo + 1.0) };
    let rough = (hi - lo) / count;
    let power = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|s| *s >= rough)
        .unwrap_or(10.0 * power);
    let first = (lo / step).floor() * step;
    let last = (hi / step).ceil() * step;
    let n = ((last - first) / step).round() as usize;
    (
        (0..=n).map(|i| first + i as f64 * step).collect(),
        first,
        last,
    )
}

/// A tick label: no more decimals than the step needs.
fn label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    format!("{v:.decimals$}")
}

impl LineChart {
    /// The layout of this chart on a `width × height` picture.
    pub fn layout(&self, width: u32, height: u32) -> Layout {
        let scale = (height / 300).max(1);
        let char_w = f64::from(font::ADVANCE * scale);
        let line_h = f64::from(font::LINE_HEIGHT * scale);
        let finite = self
            .series
            .iter()
            .flat_map(|s| s.points.iter())
            .filter(|(x, y)| x.is_finite() && y.is_finite());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, 0.0f64, f64::MIN);
        for &(x, y) in finite {
            (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
        }
        if x0 > x1 {
            (x0, x1, y1) = (0.0, 1.0, 1.0);
        }
        let (x_ticks, x0, x1) = ticks(x0, x1, 8.0);
        let (y_ticks, y0, y1) = ticks(y0, y1.max(y0), 6.0);
        let y_step = y_ticks.get(1).map_or(1.0, |t| t - y_ticks[0]);
        let widest = y_ticks
            .iter()
            .map(|&v| label(v, y_step).len())
            .max()
            .unwrap_or(1) as f64;
        let left = line_h * 1.6 + widest * char_w + char_w;
        let area = [
            left,
            line_h * 2.5,
            f64::from(width) - char_w * 2.0,
            f64::from(height) - line_h * 3.2,
        ];
        Layout {
            area,
            range: [x0, x1, y0, y1],
            x_ticks,
            y_ticks,
            scale,
        }
    }

    /// Draws the chart over the whole canvas.
    pub fn draw(&self, canvas: &mut Canvas) {
        let layout = self.layout(canvas.width(), canvas.height());
        let [l, t, r, b] = layout.area;
        let s = layout.scale;
        let char_w = i64::from(font::ADVANCE * s);
        let line_h = i64::from(font::LINE_HEIGHT * s);
        canvas.clear(PAPER);
        let step = |ticks: &[f64]| ticks.get(1).map_or(1.0, |v| v - ticks[0]);
        let (x_step, y_step) = (step(&layout.x_ticks), step(&layout.y_ticks));
        for &v in &layout.y_ticks {
            let (_, y) = layout.to_pixel(layout.range[0], v);
            canvas.line([l as f32, y as f32], [r as f32, y as f32], 1.0, RULE);
            let text = label(v, y_step);
            let w = text.len() as i64 * char_w;
            font::draw_text(
                canvas,
                l as i64 - w - char_w / 2,
                y as i64 - line_h / 3,
                s,
                INK,
                &text,
            );
        }
        for &v in &layout.x_ticks {
            let (x, _) = layout.to_pixel(v, layout.range[2]);
            canvas.line([x as f32, t as f32], [x as f32, b as f32], 1.0, RULE);
            let text = label(v, x_step);
            let w = text.len() as i64 * char_w;
            font::draw_text(
                canvas,
                x as i64 - w / 2,
                b as i64 + line_h / 2,
                s,
                INK,
                &text,
            );
        }
        canvas.line([l as f32, b as f32], [r as f32, b as f32], s as f32, INK);
        canvas.line([l as f32, t as f32], [l as f32, b as f32], s as f32, INK);
        let title_w = self.title.chars().count() as i64 * char_w;
        font::draw_text(
            canvas,
            (l + r) as i64 / 2 - title_w / 2,
            line_h / 2,
            s,
            INK,
            &self.title,
        );
        let xl_w = self.x_label.chars().count() as i64 * char_w;
        font::draw_text(
            canvas,
            (l + r) as i64 / 2 - xl_w / 2,
            i64::from(canvas.height()) - line_h * 3 / 2,
            s,
            INK,
            &self.x_label,
        );
        // The y label, one letter a row, down the left edge.
        let vertical: String = self.y_label.chars().map(|c| format!("{c}\n")).collect();
        let rows = self.y_label.chars().count() as i64;
        font::draw_text(
            canvas,
            char_w / 2,
            (t + b) as i64 / 2 - rows * line_h / 2,
            s,
            INK,
            &vertical,
        );
        for series in &self.series {
            let points: Vec<(f64, f64)> = self.path(series, &layout);
            for pair in points.windows(2) {
                canvas.line(
                    [pair[0].0 as f32, pair[0].1 as f32],
                    [pair[1].0 as f32, pair[1].1 as f32],
                    (2 * s) as f32,
                    series.colour,
                );
            }
            if !series.steps {
                for &(x, y) in &series.points {
                    let (px, py) = layout.to_pixel(x, y);
                    let m = i64::from(3 * s);
                    canvas.fill_rect(
                        px as i64 - m,
                        py as i64 - m,
                        2 * m + 1,
                        2 * m + 1,
                        series.colour,
                    );
                }
            }
        }
        // The legend, top-left inside the plotting area.
        for (i, series) in self.series.iter().enumerate() {
            let y = t as i64 + line_h / 2 + i as i64 * line_h;
            let x = l as i64 + char_w;
            canvas.fill_rect(
                x,
                y + line_h / 4,
                2 * char_w,
                i64::from(3 * s),
                series.colour,
            );
            font::draw_text(canvas, x + 3 * char_w, y, s, INK, &series.name);
        }
    }

    /// The pixel points a series is drawn through (steps expanded).
    fn path(&self, series: &Series, layout: &Layout) -> Vec<(f64, f64)> {
        let mut out = Vec::new();
        let finite = series
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite());
        let mut previous: Option<(f64, f64)> = None;
        for &(x, y) in finite {
            if let (true, Some((_, py))) = (series.steps, previous) {
                out.push(layout.to_pixel(x, py));
            }
            out.push(layout.to_pixel(x, y));
            previous = Some((x, y));
        }
        out
    }

    /// The chart as an SVG document of `width × height` pixels.
    pub fn to_svg(&self, width: u32, height: u32) -> String {
        let layout = self.layout(width, height);
        let [l, t, r, b] = layout.area;
        let size = 11.0 * f64::from(layout.scale) + 1.0;
        let mut svg = String::new();
        let _ = writeln!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="{size}">"#
        );
        let _ = writeln!(
            svg,
            r#"<rect width="100%" height="100%" fill="{}"/>"#,
            hex(PAPER)
        );
        let step = |ticks: &[f64]| ticks.get(1).map_or(1.0, |v| v - ticks[0]);
        let (x_step, y_step) = (step(&layout.x_ticks), step(&layout.y_ticks));
        for &v in &layout.y_ticks {
            let (_, y) = layout.to_pixel(layout.range[0], v);
            let _ = writeln!(
                svg,
                r#"<line x1="{l:.1}" y1="{y:.1}" x2="{r:.1}" y2="{y:.1}" stroke="{}"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                hex(RULE),
                l - size * 0.5,
                y + size * 0.35,
                label(v, y_step)
            );
        }
        for &v in &layout.x_ticks {
            let (x, _) = layout.to_pixel(v, layout.range[2]);
            let _ = writeln!(
                svg,
                r#"<line x1="{x:.1}" y1="{t:.1}" x2="{x:.1}" y2="{b:.1}" stroke="{}"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                hex(RULE),
                b + size * 1.4,
                label(v, x_step)
            );
        }
        let _ = writeln!(
            svg,
            r#"<path d="M{l:.1},{t:.1} V{b:.1} H{r:.1}" fill="none" stroke="{}" stroke-width="1.5"/>"#,
            hex(INK)
        );
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="{:.0}">{}</text>"#,
            (l + r) / 2.0,
            size * 1.6,
            size * 1.25,
            escape(&self.title)
        );
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            (l + r) / 2.0,
            f64::from(height) - size * 0.6,
            escape(&self.x_label)
        );
        let _ = writeln!(
            svg,
            r#"<text transform="translate({:.1},{:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            size * 1.2,
            (t + b) / 2.0,
            escape(&self.y_label)
        );
        for (i, series) in self.series.iter().enumerate() {
            let points = self.path(series, &layout);
            let d: Vec<String> = points
                .iter()
                .map(|(x, y)| format!("{x:.1},{y:.1}"))
                .collect();
            let _ = writeln!(
                svg,
                r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>"#,
                d.join(" "),
                hex(series.colour)
            );
            if !series.steps {
                for &(x, y) in &series.points {
                    let (px, py) = layout.to_pixel(x, y);
                    let _ = writeln!(
                        svg,
                        r#"<rect x="{:.1}" y="{:.1}" width="6" height="6" fill="{}"/>"#,
                        px - 3.0,
                        py - 3.0,
                        hex(series.colour)
                    );
                }
            }
            let y = t + size * (1.2 + 1.3 * i as f64);
            let _ = writeln!(
                svg,
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="3" fill="{c}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
                l + size,
                y - size * 0.35,
                size * 1.5,
                l + size * 3.0,
                y,
                escape(&series.name),
                c = hex(series.colour)
            );
        }
        svg.push_str("</svg>\n");
        svg
    }
}

fn hex(c: Rgb) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> LineChart {
        LineChart {
            title: "Stalls vs loss".into(),
            x_label: "loss %".into(),
            y_label: "stalls".into(),
            series: vec![
                Series {
                    name: "UDP".into(),
                    colour: Rgb(52, 120, 246),
                    points: vec![(1.0, 0.0), (5.0, 2.0), (25.0, 40.0)],
                    steps: false,
                },
                Series {
                    name: "TCP <like>".into(),
                    colour: Rgb(245, 140, 20),
                    points: vec![(1.0, 3.0), (5.0, 90.0), (25.0, f64::NAN)],
                    steps: true,
                },
            ],
        }
    }

    #[test]
    fn ticks_are_round_and_cover_the_data() {
        let (t, lo, hi) = ticks(0.0, 93.0, 6.0);
        assert_eq!((lo, hi), (0.0, 100.0));
        assert_eq!(t[1] - t[0], 20.0);
        let (t, _, _) = ticks(0.0, 0.37, 6.0);
        assert!((t[1] - t[0] - 0.1).abs() < 1e-12);
        assert_eq!(label(0.30000000000000004, 0.1), "0.3");
        assert_eq!(ticks(5.0, 5.0, 6.0).0.first(), Some(&5.0));
    }

    #[test]
    fn the_chart_draws_its_series_and_writes_svg() {
        let c = chart();
        let mut canvas = Canvas::new(400, 300);
        c.draw(&mut canvas);
        let blue = canvas
            .pixels()
            .iter()
            .filter(|&&p| p == Rgb(52, 120, 246))
            .count();
        assert!(blue > 100, "{blue}");
        let svg = c.to_svg(400, 300);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("TCP &lt;like&gt;") && !svg.contains("NaN"));
        // An empty chart still lays out.
        let empty = LineChart {
            series: Vec::new(),
            ..c
        };
        empty.draw(&mut canvas);
    }
}
