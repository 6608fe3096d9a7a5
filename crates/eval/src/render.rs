//! The report rendered: the bucket table as TSV, a human-readable summary, and the recall and
//! precision curves as SVG (plotters).

use crate::{Ratio, Report};
use pocketdex::error::{Error, Result};
use std::fmt::Write as _;

impl Report {
    /// The bucket table as TSV: a header row, then one row per bucket (columns in the crate
    /// documentation).
    pub fn tsv(&self) -> String {
        let mut s = String::from(
            "lo\thi\tpairs\tfound\trecall\tfound_both\trecall_both\tlong_pairs\tlong_recall\t\
             short_pairs\tshort_recall\tmean_jaccard3\thits\tmean_score\tbias\trmse\t\
             score_ge_lo\tcorrect\tprecision\n",
        );
        let f = |x: Option<f64>| x.map_or_else(|| "NA".to_string(), |v| format!("{v:.4}"));
        for b in &self.buckets {
            let (ph, pc, pr) = match b.precision {
                Some(p) => (p.of.to_string(), p.n.to_string(), f(p.rate)),
                None => ("NA".into(), "NA".into(), "NA".into()),
            };
            let _ = writeln!(
                s,
                "{:.2}\t{:.2}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{ph}\t{pc}\t{pr}",
                b.lo,
                b.hi,
                b.recall.of,
                b.recall.n,
                f(b.recall.rate),
                b.recall_both.n,
                f(b.recall_both.rate),
                b.recall_long.of,
                f(b.recall_long.rate),
                b.recall_short.of,
                f(b.recall_short.rate),
                f(b.mean_jaccard3),
                b.hits,
                f(b.mean_score),
                f(b.bias),
                f(b.rmse),
            );
        }
        s
    }

    /// A human-readable summary: the bucket table and the headline numbers.
    pub fn text(&self) -> String {
        let ratio = |r: &Ratio| match r.rate {
            Some(v) => format!("{:.2}% ({}/{})", 100.0 * v, r.n, r.of),
            None => "n/a (0 pairs)".to_string(),
        };
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{} documents, {} truth pairs with cosine ≥ {:.2}; query threshold {}, top {}",
            self.documents,
            self.truth_pairs,
            self.settings.min,
            self.settings.threshold,
            self.settings
                .top
                .map_or_else(|| "all".to_string(), |t| t.to_string())
        );
        let _ = writeln!(
            s,
            "  cosine         pairs   recall     long    short    hits    bias    rmse  precision(s)"
        );
        let pc =
            |x: Option<f64>| x.map_or_else(|| "n/a".to_string(), |v| format!("{:.1}%", 100.0 * v));
        for b in &self.buckets {
            let _ = writeln!(
                s,
                "  [{:.2},{:.2}{} {:>7}  {:>7}  {:>7}  {:>7}  {:>6}  {:>6}  {:>6}  {}",
                b.lo,
                b.hi,
                if b.hi >= 1.0 { "]" } else { ")" },
                b.recall.of,
                pc(b.recall.rate),
                pc(b.recall_long.rate),
                pc(b.recall_short.rate),
                b.hits,
                b.bias.map_or("n/a".into(), |v| format!("{v:+.3}")),
                b.rmse.map_or("n/a".into(), |v| format!("{v:.3}")),
                b.precision.as_ref().map_or("n/a".into(), |p| format!(
                    "{} of {}",
                    pc(p.rate),
                    p.of
                )),
            );
        }
        let _ = write!(s, "recall:");
        for r in self.recall.iter() {
            let _ = write!(s, " {} {};", r.name, ratio(&r.all));
        }
        let _ = writeln!(s);
        let r = &self.recall.cos_0_90;
        let _ = writeln!(
            s,
            "recall {} by length: long {}; short {}",
            r.name,
            ratio(&r.long),
            ratio(&r.short)
        );
        let p = &self.precision_score_0_90;
        let _ = writeln!(
            s,
            "precision of hits with score ≥ 0.9: cos ≥ 0.9 {}; cos ≥ 0.8 {}",
            ratio(&p.cos_0_90),
            ratio(&p.cos_0_80)
        );
        let _ = writeln!(
            s,
            "precision of hits with score ≥ 0.7: cos ≥ 0.6 {}",
            ratio(&self.precision_score_0_70_cos_0_60)
        );
        let e = &self.estimator;
        let _ = writeln!(
            s,
            "estimator (score − cosine over {} hits on truth pairs): bias {}, RMSE {}, MAE {}",
            e.hits,
            e.bias.map_or("n/a".into(), |v| format!("{v:+.4}")),
            e.rmse.map_or("n/a".into(), |v| format!("{v:.4}")),
            e.mae.map_or("n/a".into(), |v| format!("{v:.4}")),
        );
        let q = &self.queries;
        let _ = writeln!(
            s,
            "self-first {} ({} counting ties at equal score and codes); self found {}; {} non-self hits ({} on truth pairs), {:.1} candidates/query",
            ratio(&self.self_first),
            ratio(&self.self_first_or_tie),
            ratio(&self.self_found),
            q.hits,
            q.hits_on_truth_pairs,
            q.mean_candidates
        );
        s
    }

    /// The plot as SVG: recall per bucket (at the bucket centres) and precision(s) against
    /// similarity, axes `min`..1 × 0..1.
    pub fn svg(&self, title: &str) -> Result<String> {
        use plotters::prelude::*;
        let err = |e: &dyn std::fmt::Display| Error::Invalid(format!("plot: {e}"));
        let x0 = self.buckets.first().map_or(0.5, |b| b.lo);
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (820, 560)).into_drawing_area();
            root.fill(&WHITE).map_err(|e| err(&e))?;
            let mut chart = ChartBuilder::on(&root)
                .caption(title, ("sans-serif", 20))
                .margin(18)
                .x_label_area_size(48)
                .y_label_area_size(58)
                .build_cartesian_2d(x0..1.0f64, 0.0..1.0f64)
                .map_err(|e| err(&e))?;
            chart
                .configure_mesh()
                .x_labels(((1.0 - x0) * 20.0).round() as usize + 1)
                .y_labels(11)
                .x_label_formatter(&|x| format!("{x:.2}"))
                .y_label_formatter(&|y| format!("{y:.1}"))
                .x_desc("similarity (true tf-idf cosine; for precision: score and cosine ≥ s)")
                .y_desc("recall / precision")
                .max_light_lines(1)
                .light_line_style(BLACK.mix(0.05))
                .draw()
                .map_err(|e| err(&e))?;
            let recall: Vec<(f64, f64)> = self
                .buckets
                .iter()
                .filter_map(|b| b.recall.rate.map(|r| ((b.lo + b.hi) / 2.0, r)))
                .collect();
            let precision: Vec<(f64, f64)> = self
                .buckets
                .iter()
                .filter_map(|b| b.precision.and_then(|p| p.rate).map(|r| (b.lo, r)))
                .collect();
            let blue = RGBColor(31, 119, 180);
            let orange = RGBColor(214, 39, 40);
            chart
                .draw_series(LineSeries::new(recall.clone(), blue.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label("recall (pairs with true cosine in the bucket)")
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], blue.stroke_width(2))
                });
            chart
                .draw_series(PointSeries::of_element(
                    recall,
                    4,
                    blue.filled(),
                    &|c, s, st| Circle::new(c, s, st),
                ))
                .map_err(|e| err(&e))?;
            chart
                .draw_series(LineSeries::new(precision.clone(), orange.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label("precision(s): hits with score ≥ s that have cosine ≥ s")
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], orange.stroke_width(2))
                });
            chart
                .draw_series(PointSeries::of_element(
                    precision,
                    4,
                    orange.filled(),
                    &|c, s, st| EmptyElement::at(c) + Rectangle::new([(-s, -s), (s, s)], st),
                ))
                .map_err(|e| err(&e))?;
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK.mix(0.5))
                .label_font(("sans-serif", 14))
                .draw()
                .map_err(|e| err(&e))?;
            root.present().map_err(|e| err(&e))?;
        }
        Ok(svg)
    }
}
