//! The report as CSV: one line per series, every number in canonical units.

use crate::report::Report;

use super::flags_text;

fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x}")).unwrap_or_default()
}

fn field(s: &str) -> String {
    // Quote always; double inner quotes. A leading =,+,-,@ is prefixed so spreadsheets do not
    // evaluate user-supplied labels as formulas.
    let s = if s.starts_with(['=', '+', '-', '@']) && s.parse::<f64>().is_err() {
        format!("'{s}")
    } else {
        s.to_string()
    };
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// One line per series, every number in canonical units.
pub fn text(r: &Report) -> String {
    let mut out = String::from(
        "benchmark,params,metric,scope,statistic,label,unit,direction,base_n,base_median,base_mean,base_std,head_n,head_median,head_mean,head_std,change_pct,ci_low,ci_high,p,q,cliffs_delta,test,verdict,flags\n",
    );
    for row in &r.comparisons {
        let c = &row.cmp;
        let fields = [
            field(&row.benchmark),
            field(&row.params_text()),
            field(&row.metric),
            field(&row.scope),
            field(row.statistic.as_deref().unwrap_or("")),
            field(row.label.as_deref().unwrap_or("")),
            field(row.unit.as_str()),
            row.direction.as_str().to_string(),
            c.base.n.to_string(),
            opt(c.base.median),
            opt(c.base.mean),
            opt(c.base.std),
            c.head.n.to_string(),
            opt(c.head.median),
            opt(c.head.mean),
            opt(c.head.std),
            opt(c.change_pct),
            opt(c.ci.as_ref().map(|i| i.low)),
            opt(c.ci.as_ref().map(|i| i.high)),
            opt(c.p),
            opt(c.q),
            opt(c.cliffs_delta),
            format!("{:?}", c.test).to_lowercase(),
            c.verdict.as_str().to_string(),
            field(&flags_text(row)),
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn fields_are_quoted_and_defused() {
        assert_eq!(super::field("a\"b"), "\"a\"\"b\"");
        assert_eq!(super::field("=cmd()"), "\"'=cmd()\"");
        assert_eq!(super::field("-1.5"), "\"-1.5\"");
    }
}
