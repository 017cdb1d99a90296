//! SVG plots of benchmark results (`--plot FILE.svg`).
//!
//! Each function takes plain data and returns the SVG text; [`save`]
//! writes it. Drawn with plotters' SVG backend only: text goes into the
//! file as `<text>` elements, so no font files are read.

use std::path::{Path, PathBuf};

use hearth::{Error, FileError};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// `--plot FILE.svg`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct PlotOut {
    /// Also draw the results as an SVG plot into FILE.svg (default: none;
    /// its folder must exist).
    #[arg(long = "plot", value_name = "FILE.svg", value_parser = parse_svg_path)]
    pub plot: Option<PathBuf>,
}

/// A plot path: it must end in `.svg` and its folder must exist, checked
/// before a long benchmark starts.
pub fn parse_svg_path(s: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(s);
    let is_svg = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    if !is_svg {
        return Err("plots are SVG: name the file *.svg".into());
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(format!("folder {} does not exist", dir.display()));
    }
    Ok(path)
}

/// Series colours (Okabe-Ito: distinguishable with colour blindness).
const COLORS: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(120, 120, 120),
    RGBColor(0, 0, 0),
];

/// The colour of series `i`.
fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

/// A named line: (x, y) points in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend entry.
    pub name: String,
    /// The points, in x order.
    pub points: Vec<(f64, f64)>,
}

/// Bars in groups: one group per x label, one bar per series in each.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupedBars {
    /// The caption.
    pub title: String,
    /// The y axis' description.
    pub y_desc: String,
    /// The x labels, one per group.
    pub groups: Vec<String>,
    /// The legend entries, one per bar of a group.
    pub series: Vec<String>,
    /// `values[group][series]`; `None` draws no bar.
    pub values: Vec<Vec<Option<f64>>>,
}

impl Series {
    /// The level profile of a circuit: (level, bootstraps at it) for each
    /// level, from `Stats::width_per_level`.
    pub fn profile(name: String, widths: &[usize]) -> Series {
        Series {
            name,
            points: widths
                .iter()
                .enumerate()
                .filter(|(_, &w)| w > 0)
                .map(|(i, &w)| ((i + 1) as f64, w as f64))
                .collect(),
        }
    }
}

impl GroupedBars {
    /// Bars from (group, series, value) triples, groups and series in the
    /// order they first appear.
    pub fn from_triples(title: String, y_desc: String, triples: &[(String, String, f64)]) -> Self {
        fn index(list: &mut Vec<String>, name: &str) -> usize {
            list.iter().position(|n| n == name).unwrap_or_else(|| {
                list.push(name.to_string());
                list.len() - 1
            })
        }
        let (mut groups, mut series) = (Vec::new(), Vec::new());
        let cells: Vec<(usize, usize, f64)> = triples
            .iter()
            .map(|(g, s, v)| (index(&mut groups, g), index(&mut series, s), *v))
            .collect();
        let mut values = vec![vec![None; series.len()]; groups.len()];
        for (g, s, v) in cells {
            values[g][s] = Some(v);
        }
        GroupedBars {
            title,
            y_desc,
            groups,
            series,
            values,
        }
    }
}

/// Writes `svg` to `path`.
pub fn save(path: &Path, svg: &str) -> Result<(), Error> {
    std::fs::write(path, svg).map_err(|source| FileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    eprintln!("plot written to {}", path.display());
    Ok(())
}

/// A plotters error as a hearth error.
fn drawing(e: impl std::fmt::Display) -> Error {
    Error::Config(format!("drawing the plot: {e}"))
}

/// Today's date (UTC) as YYYY-MM-DD, for plot titles.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    date_of(secs / 86_400)
}

/// The civil date of day `days` after 1970-01-01 (Hinnant's algorithm).
fn date_of(days: u64) -> String {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + (month <= 2) as i64;
    format!("{year:04}-{month:02}-{day:02}")
}

/// "1 thread", "N threads".
pub fn threads_word(n: usize) -> String {
    if n == 1 {
        "1 thread".into()
    } else {
        format!("{n} threads")
    }
}

/// Tick values for a log axis over `lo..hi`: powers of `base` (and 1.5
/// times them where the range spans less than 8), or the 1-2-5 sequence
/// when `base` is 10.
fn log_ticks(lo: f64, hi: f64, base: f64) -> Vec<f64> {
    let steps: &[f64] = if base == 10.0 {
        &[1.0, 2.0, 5.0]
    } else if hi / lo < 8.0 {
        &[1.0, 1.5]
    } else {
        &[1.0]
    };
    let mut ticks = Vec::new();
    let mut decade = base.powf(lo.log(base).floor());
    while decade <= hi {
        for &s in steps {
            let v = decade * s;
            if v >= lo && v <= hi {
                ticks.push(v);
            }
        }
        decade *= base;
    }
    ticks
}

/// A number as a tick label: integers plainly, fractions with up to 3
/// decimals.
fn tick_label(v: f64) -> String {
    if v >= 1.0 && v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// How a legend entry is marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mark {
    /// A filled square (bars).
    Square,
    /// A short line (lines).
    Line,
    /// A dot (points).
    Dot,
}

/// One legend entry.
struct Entry {
    name: String,
    color: RGBColor,
    mark: Mark,
}

/// An SVG drawing area.
type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// Font size of labels and legend entries (plotters' units).
const LABEL: u32 = 15;
/// Estimated width of one label character in pixels (no font metrics:
/// generous, so that text does not overlap).
const CHAR_PX: usize = 8;

/// The legend's entries in rows that fit `width` pixels.
fn legend_rows(entries: &[Entry], width: u32) -> Vec<Vec<&Entry>> {
    let mut rows: Vec<Vec<&Entry>> = vec![Vec::new()];
    let mut used = 0;
    for e in entries {
        let w = 30 + e.name.len() * CHAR_PX;
        if used + w > width as usize && !rows.last().is_some_and(Vec::is_empty) {
            rows.push(Vec::new());
            used = 0;
        }
        used += w;
        rows.last_mut().expect("one row").push(e);
    }
    rows
}

/// White background, the title, and the legend in rows under it (outside
/// the plot, so it hides no data); returns the area left for the chart.
fn frame<'a>(root: &Area<'a>, title: &str, entries: &[Entry]) -> Result<Area<'a>, Error> {
    root.fill(&WHITE).map_err(drawing)?;
    let body = root.titled(title, ("sans-serif", 20)).map_err(drawing)?;
    let (width, _) = body.dim_in_pixel();
    let rows = legend_rows(entries, width.saturating_sub(40));
    let (legend, chart) = body.split_vertically(rows.len() as u32 * 22 + 6);
    let text = ("sans-serif", LABEL)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (r, row) in rows.iter().enumerate() {
        let y = r as i32 * 22 + 12;
        let mut x = 40;
        for e in row {
            let draw = match e.mark {
                Mark::Square => legend.draw(&Rectangle::new(
                    [(x, y - 6), (x + 12, y + 6)],
                    e.color.filled(),
                )),
                Mark::Line => legend.draw(&PathElement::new(
                    [(x - 2, y), (x + 16, y)],
                    e.color.stroke_width(3),
                )),
                Mark::Dot => legend.draw(&Circle::new((x + 6, y), 5, e.color.filled())),
            };
            draw.map_err(drawing)?;
            legend
                .draw(&Text::new(e.name.as_str(), (x + 22, y), text.clone()))
                .map_err(drawing)?;
            x += 30 + (e.name.len() * CHAR_PX) as i32;
        }
    }
    Ok(chart)
}

/// Smallest and largest ratio drawn in full; bars beyond are cut at the
/// axis and carry their value.
const RATIO_RANGE: (f64, f64) = (1.0 / 16.0, 16.0);

/// A ratio as a tick label: 1/2, 1/4, ... below 1.
fn ratio_tick(v: f64) -> String {
    if v < 1.0 && (1.0 / v).fract() == 0.0 {
        format!("1/{:.0}", 1.0 / v)
    } else {
        tick_label(v)
    }
}

/// A value written beside a bar: two significant digits.
fn value_label(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else if v >= 0.01 {
        format!("{v:.2}")
    } else {
        format!("{v:.1e}")
    }
}

/// Ratios as bars from 1.0 on a log axis (above the line at 1.0: slower,
/// below: faster), one group per label. Ratios beyond 1/16 or 16 are cut at
/// the axis and labelled with their value.
pub fn ratio_bars(chart: &GroupedBars) -> Result<String, Error> {
    let values = chart.values.iter().flatten().flatten().copied();
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((1.0f64, 1.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    // Room beyond the last bar: for a cut bar's value, else a little.
    let lo = if lo < RATIO_RANGE.0 {
        RATIO_RANGE.0 / 2.0
    } else {
        lo / 1.3
    };
    let hi = if hi > RATIO_RANGE.1 {
        RATIO_RANGE.1 * 2.0
    } else {
        hi * 1.3
    };
    let groups = chart.groups.len().max(1);
    let slots = chart.series.len().max(1);
    let width = (160 + groups * (slots * 16 + 18))
        .max(chart.title.len() * 10 + 40)
        .max(720) as u32;
    let longest = chart.groups.iter().map(|g| g.len()).max().unwrap_or(0);
    let label_room = (longest * CHAR_PX + 24) as u32;
    let entries: Vec<Entry> = chart
        .series
        .iter()
        .enumerate()
        .map(|(s, name)| Entry {
            name: name.clone(),
            color: color(s),
            mark: Mark::Square,
        })
        .collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, 420 + label_room)).into_drawing_area();
        let area = frame(&root, &chart.title, &entries)?;
        // x in hundredths of a group (plotters' key points need an
        // integer axis to format their labels).
        let centers: Vec<i32> = (0..groups as i32).map(|g| g * 100 + 50).collect();
        let mut c = ChartBuilder::on(&area)
            .margin(12)
            .x_label_area_size(label_room)
            .y_label_area_size(70)
            .build_cartesian_2d(
                (0..groups as i32 * 100).with_key_points(centers.clone()),
                (lo..hi).log_scale().with_key_points(log_ticks(lo, hi, 2.0)),
            )
            .map_err(drawing)?;
        // Ticks only: plotters centres rotated labels on the tick, so the
        // group names are drawn below the axis by hand.
        c.configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&|_| String::new())
            .y_label_formatter(&|y| ratio_tick(*y))
            .label_style(("sans-serif", LABEL))
            .axis_desc_style(("sans-serif", 16))
            .y_desc(chart.y_desc.as_str())
            .draw()
            .map_err(drawing)?;
        let down = ("sans-serif", LABEL)
            .into_font()
            .transform(FontTransform::Rotate90)
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (label, &x) in chart.groups.iter().zip(&centers) {
            let (px, py) = c.backend_coord(&(x, lo));
            root.draw(&Text::new(label.as_str(), (px, py + 8), down.clone()))
                .map_err(drawing)?;
        }
        c.draw_series(LineSeries::new(
            [(0, 1.0), (groups as i32 * 100, 1.0)],
            BLACK.stroke_width(1),
        ))
        .map_err(drawing)?;
        let bar = 80 / slots as i32;
        let small = ("sans-serif", 12)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Center));
        for s in 0..slots {
            let col = color(s);
            for (g, row) in chart.values.iter().enumerate() {
                let Some(v) = row.get(s).copied().flatten().filter(|v| v.is_finite()) else {
                    continue;
                };
                let x0 = g as i32 * 100 + 10 + s as i32 * bar;
                let end = v.clamp(RATIO_RANGE.0, RATIO_RANGE.1);
                c.draw_series([Rectangle::new(
                    [(x0, 1.0), (x0 + bar * 9 / 10, end)],
                    col.filled(),
                )])
                .map_err(drawing)?;
                if end != v {
                    // Cut at the axis: say how far it goes.
                    let (px, py) = c.backend_coord(&(x0 + bar * 9 / 20, end));
                    let dy = if v < 1.0 { 10 } else { -10 };
                    root.draw(&Text::new(value_label(v), (px, py + dy), small.clone()))
                        .map_err(drawing)?;
                }
            }
        }
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// Tick positions for `1..=depth` levels: every level up to 20, else a
/// 1-2-5 step that gives at most about 20 ticks.
fn level_ticks(depth: i32) -> Vec<i32> {
    let step = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]
        .into_iter()
        .find(|&s| depth / s <= 20)
        .unwrap_or(10_000);
    let mut ticks = vec![1];
    ticks.extend((step..=depth).step_by(step as usize).filter(|&t| t != 1));
    ticks
}

/// Draws the level profiles of named circuits (their statistics from the
/// count backend) into `path`, labelled with their #PBS and depth.
pub fn save_level_profiles(
    path: &Path,
    title: &str,
    circuits: &[(String, hearth::Stats)],
    threads: usize,
) -> Result<(), Error> {
    let profiles: Vec<Series> = circuits
        .iter()
        .map(|(name, st)| {
            Series::profile(
                format!("{name}: {} PBS, depth {}", st.pbs, st.depth),
                &st.width_per_level,
            )
        })
        .collect();
    save(path, &level_profiles(title, &profiles, threads)?)
}

/// Bootstraps ready at each level of some circuits (log axis), with a line
/// at `threads`: a level at least that wide keeps every thread busy.
pub fn level_profiles(title: &str, profiles: &[Series], threads: usize) -> Result<String, Error> {
    let points = || profiles.iter().flat_map(|p| p.points.iter().copied());
    let depth = points().map(|(x, _)| x).fold(1.0f64, f64::max).round() as i32;
    let widest = points().map(|(_, y)| y).fold(threads as f64, f64::max);
    let (lo, hi) = (0.8, widest * 1.6);
    // x in tenths of a level (an integer axis, for the key points).
    let at = |(x, y): (f64, f64)| ((x * 10.0).round() as i32, y);
    let gray = color(6);
    let mut entries: Vec<Entry> = profiles
        .iter()
        .enumerate()
        .map(|(i, p)| Entry {
            name: p.name.clone(),
            color: color(i),
            mark: Mark::Line,
        })
        .collect();
    entries.push(Entry {
        name: format!(
            "{}: a level above this line keeps them all busy",
            threads_word(threads)
        ),
        color: gray,
        mark: Mark::Line,
    });
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, 620)).into_drawing_area();
        let area = frame(&root, title, &entries)?;
        let ticks = level_ticks(depth).iter().map(|l| l * 10).collect();
        let mut c = ChartBuilder::on(&area)
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d(
                (5..depth * 10 + 5).with_key_points(ticks),
                (lo..hi)
                    .log_scale()
                    .with_key_points(log_ticks(1.0, hi, 10.0)),
            )
            .map_err(drawing)?;
        c.configure_mesh()
            .label_style(("sans-serif", LABEL))
            .axis_desc_style(("sans-serif", 16))
            .x_label_formatter(&|x| format!("{}", x / 10))
            .y_label_formatter(&|y| tick_label(*y))
            .x_desc("level (1 + the longest chain of bootstraps before it)")
            .y_desc("bootstraps ready at the level")
            .draw()
            .map_err(drawing)?;
        c.draw_series(LineSeries::new(
            [(5, threads as f64), (depth * 10 + 5, threads as f64)],
            gray.stroke_width(2),
        ))
        .map_err(drawing)?;
        for (i, p) in profiles.iter().enumerate() {
            let col = color(i);
            c.draw_series(LineSeries::new(
                p.points.iter().copied().map(at),
                col.stroke_width(2),
            ))
            .map_err(drawing)?;
            if p.points.len() <= 40 {
                c.draw_series(
                    p.points
                        .iter()
                        .map(|&xy| Circle::new(at(xy), 4, col.filled())),
                )
                .map_err(drawing)?;
            }
        }
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// Throughput (y, from 0) against batch size (x, log 2), one line per
/// series; a series of one point is drawn as a point.
pub fn throughput(title: &str, series: &[Series]) -> Result<String, Error> {
    let points = || series.iter().flat_map(|s| s.points.iter().copied());
    let max_x = points().map(|(x, _)| x).fold(2.0f64, f64::max);
    let max_y = points().map(|(_, y)| y).fold(1.0f64, f64::max);
    let entries: Vec<Entry> = series
        .iter()
        .enumerate()
        .map(|(i, s)| Entry {
            name: s.name.clone(),
            color: color(i),
            mark: if s.points.len() > 1 {
                Mark::Line
            } else {
                Mark::Dot
            },
        })
        .collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, 620)).into_drawing_area();
        let area = frame(&root, title, &entries)?;
        let mut c = ChartBuilder::on(&area)
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d(
                (0.8..max_x * 1.25).log_scale().with_key_points(
                    log_ticks(1.0, max_x, 2.0)
                        .into_iter()
                        .filter(|t| t.log2().fract() == 0.0)
                        .collect(),
                ),
                0.0..max_y * 1.15,
            )
            .map_err(drawing)?;
        c.configure_mesh()
            .max_light_lines(0)
            .label_style(("sans-serif", LABEL))
            .axis_desc_style(("sans-serif", 16))
            .x_label_formatter(&|x| tick_label(*x))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .x_desc("batch (independent bootstraps in one circuit)")
            .y_desc("bootstraps per second")
            .draw()
            .map_err(drawing)?;
        for (i, s) in series.iter().enumerate() {
            let col = color(i);
            if s.points.len() > 1 {
                c.draw_series(LineSeries::new(
                    s.points.iter().copied(),
                    col.stroke_width(2),
                ))
                .map_err(drawing)?;
            }
            c.draw_series(s.points.iter().map(|&xy| Circle::new(xy, 5, col.filled())))
                .map_err(drawing)?;
        }
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// One panel of [`over_time`]: its y axis (from 0) and its lines.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// The y axis' description.
    pub y_desc: String,
    /// The lines, each in its colour.
    pub series: Vec<Series>,
}

/// Measures over time: panels stacked under one x axis (`x_desc`), each
/// with its own y axis from 0, and vertical lines at `marks` (x, label)
/// across every panel.
pub fn over_time(
    title: &str,
    x_desc: &str,
    panels: &[Panel],
    marks: &[(f64, String)],
) -> Result<String, Error> {
    let all = || panels.iter().flat_map(|p| &p.series);
    let max_x = all()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(1e-3f64, f64::max);
    let entries: Vec<Entry> = all()
        .enumerate()
        .map(|(i, s)| Entry {
            name: s.name.clone(),
            color: color(i),
            mark: Mark::Line,
        })
        .collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, 300 + 260 * panels.len() as u32))
            .into_drawing_area();
        let area = frame(&root, title, &entries)?;
        let mut colour = 0;
        for (i, (panel, part)) in panels
            .iter()
            .zip(area.split_evenly((panels.len(), 1)))
            .enumerate()
        {
            let max_y = panel
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1))
                .fold(1.0f64, f64::max);
            let last = i + 1 == panels.len();
            let mut c = ChartBuilder::on(&part)
                .margin(12)
                .x_label_area_size(if last { 50 } else { 10 })
                .y_label_area_size(70)
                .build_cartesian_2d(0.0..max_x * 1.02, 0.0..max_y * 1.15)
                .map_err(drawing)?;
            let mut mesh = c.configure_mesh();
            mesh.max_light_lines(0)
                .label_style(("sans-serif", LABEL))
                .axis_desc_style(("sans-serif", 16))
                .y_label_formatter(&|y| format!("{y:.0}"))
                .y_desc(panel.y_desc.as_str());
            if last {
                mesh.x_desc(x_desc).x_label_formatter(&|x| tick_label(*x));
            } else {
                mesh.x_label_formatter(&|_| String::new());
            }
            mesh.draw().map_err(drawing)?;
            for (x, label) in marks {
                let top = max_y * 1.15;
                c.draw_series(LineSeries::new(
                    [(*x, 0.0), (*x, top)],
                    BLACK.mix(0.6).stroke_width(1),
                ))
                .map_err(drawing)?;
                c.draw_series(std::iter::once(Text::new(
                    label.clone(),
                    (*x, top * 0.97),
                    ("sans-serif", LABEL).into_font().color(&BLACK),
                )))
                .map_err(drawing)?;
            }
            for s in &panel.series {
                c.draw_series(LineSeries::new(
                    s.points.iter().copied(),
                    color(colour).stroke_width(2),
                ))
                .map_err(drawing)?;
                colour += 1;
            }
        }
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plot_paths_are_checked() {
        let dir = std::env::temp_dir();
        let ok = dir.join("x.svg");
        assert_eq!(parse_svg_path(ok.to_str().unwrap()).unwrap(), ok);
        assert!(parse_svg_path("plot.svg").is_ok());
        assert!(parse_svg_path("plot.png").unwrap_err().contains("*.svg"));
        let missing = dir.join("hearth-no-such-folder").join("x.svg");
        let e = parse_svg_path(missing.to_str().unwrap()).unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
    }

    /// Occurrences of `needle` in `hay`.
    fn count(hay: &str, needle: &str) -> usize {
        hay.matches(needle).count()
    }

    /// The SVG colour attribute of series `i`.
    fn fill(i: usize) -> String {
        let RGBColor(r, g, b) = color(i);
        format!("fill=\"#{r:02X}{g:02X}{b:02X}\"")
    }

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("hearth-plot-{}-{name}", std::process::id()))
    }

    #[test]
    fn ratio_bars_draw_one_bar_per_value() {
        let chart = GroupedBars {
            title: "ratio test".into(),
            y_desc: "hearth / tfhe-rs".into(),
            groups: vec!["add".into(), "mul (wrapping)".into(), "max".into()],
            series: vec!["16 bits".into(), "32 bits".into()],
            values: vec![
                vec![Some(0.5), Some(2.0)],
                vec![Some(1.3), None],
                vec![Some(0.9), Some(0.7)],
            ],
        };
        let path = temp("bars.svg");
        save(&path, &ratio_bars(&chart).unwrap()).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        // Each bar, plus its series' legend box.
        assert_eq!(count(&svg, &fill(0)), 3 + 1, "{svg}");
        assert_eq!(count(&svg, &fill(1)), 2 + 1, "{svg}");
        assert_eq!(count(&svg, "<rect"), 1 + 5 + 2, "background, bars, legend");
        for label in [
            "ratio test",
            "mul (wrapping)",
            "16 bits",
            "32 bits",
            ">\n1\n<",
            ">\n1/2\n<",
        ] {
            assert!(svg.contains(label), "{label} missing:\n{svg}");
        }
    }

    #[test]
    fn triples_make_groups_in_order() {
        let t = |g: &str, s: &str, v| (g.to_string(), s.to_string(), v);
        let bars = GroupedBars::from_triples(
            "t".into(),
            "y".into(),
            &[t("add", "8", 1.0), t("mul", "8", 2.0), t("add", "16", 3.0)],
        );
        assert_eq!(bars.groups, ["add", "mul"]);
        assert_eq!(bars.series, ["8", "16"]);
        assert_eq!(
            bars.values,
            [vec![Some(1.0), Some(3.0)], vec![Some(2.0), None]]
        );
        let p = Series::profile("p".into(), &[4, 0, 2]);
        assert_eq!(p.points, [(1.0, 4.0), (3.0, 2.0)]);
    }

    #[test]
    fn level_profiles_draw_every_level() {
        let profiles = [
            Series {
                name: "mul, 32 bits".into(),
                points: vec![(1.0, 64.0), (2.0, 500.0), (3.0, 12.0)],
            },
            Series {
                name: "add, 32 bits".into(),
                points: vec![(1.0, 16.0), (2.0, 16.0)],
            },
        ];
        let svg = level_profiles("profile test", &profiles, 2).unwrap();
        // One marker per level of each circuit.
        assert_eq!(count(&svg, "<circle"), 5, "{svg}");
        for label in [
            "profile test",
            "mul, 32 bits",
            "add, 32 bits",
            "2 threads: a level",
        ] {
            assert!(svg.contains(label), "{label} missing:\n{svg}");
        }
        // Level ticks 1..3 on the x axis.
        for tick in [">\n1\n<", ">\n2\n<", ">\n3\n<"] {
            assert!(svg.contains(tick), "{tick} missing");
        }
    }

    #[test]
    fn throughput_draws_points_and_legend() {
        let series = [
            Series {
                name: "cpu, 2 threads".into(),
                points: vec![(1.0, 30.0), (2.0, 60.0), (4.0, 62.0)],
            },
            Series {
                name: "cpu, 1 thread (batch 4)".into(),
                points: vec![(4.0, 31.0)],
            },
        ];
        let svg = throughput("throughput test", &series).unwrap();
        // Points, plus one legend marker per series.
        // The four points, and the legend's dot for the one-point series
        // (the line series is marked by a line).
        assert_eq!(count(&svg, "<circle"), 4 + 1, "{svg}");
        assert!(svg.contains("cpu, 1 thread (batch 4)") && svg.contains("throughput test"));
    }

    #[test]
    fn over_time_draws_every_panel_and_mark() {
        let line = |name: &str, ys: &[f64]| Series {
            name: name.into(),
            points: ys.iter().enumerate().map(|(i, &y)| (i as f64, y)).collect(),
        };
        let panels = [
            Panel {
                y_desc: "memory (MiB)".into(),
                series: vec![
                    line("rss", &[100.0, 120.0, 90.0]),
                    line("peak", &[110.0, 130.0, 95.0]),
                ],
            },
            Panel {
                y_desc: "descriptors".into(),
                series: vec![line("fds", &[14.0, 40.0, 15.0])],
            },
        ];
        let svg = over_time("soak test", "minutes", &panels, &[(1.5, "kill -9".into())]).unwrap();
        for label in [
            "soak test",
            "memory (MiB)",
            "descriptors",
            "kill -9",
            "peak",
            "minutes",
        ] {
            assert!(svg.contains(label), "{label} missing");
        }
        // The mark's label in each panel; each series' line and legend
        // mark in its own colour.
        assert_eq!(count(&svg, ">\nkill -9\n<"), 2, "{svg}");
        for i in 0..3 {
            let RGBColor(r, g, b) = color(i);
            let stroke = format!("stroke=\"#{r:02X}{g:02X}{b:02X}\"");
            assert_eq!(count(&svg, &stroke), 2, "series {i}: {svg}");
        }
    }

    #[test]
    fn bad_plot_paths_are_errors() {
        let path = temp("no-such-dir").join("x.svg");
        let e = save(&path, "<svg/>").unwrap_err().to_string();
        assert!(e.contains("no-such-dir"), "{e}");
    }

    #[test]
    fn dates_and_ticks() {
        assert_eq!(date_of(0), "1970-01-01");
        assert_eq!(date_of(20_000), "2024-10-04");
        assert_eq!(
            log_ticks(0.1, 5.0, 2.0),
            vec![0.125, 0.25, 0.5, 1.0, 2.0, 4.0]
        );
        assert_eq!(log_ticks(0.4, 2.5, 2.0), vec![0.5, 0.75, 1.0, 1.5, 2.0]);
        assert_eq!(
            log_ticks(1.0, 600.0, 10.0),
            vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0]
        );
        assert_eq!(tick_label(0.25), "0.25");
        assert_eq!(ratio_tick(0.0625), "1/16");
        assert_eq!(ratio_tick(2.0), "2");
        assert_eq!(ratio_tick(0.75), "0.75");
        assert_eq!(value_label(0.0008), "8.0e-4");
        assert_eq!(value_label(0.456), "0.46");
        assert_eq!(tick_label(64.0), "64");
    }
}
