//! The parts of a mail comparison the report does not have: which blocks were paired, and the
//! author's claims beside the measurement, as terminal text, Markdown and a 72-column reply.

use crate::mail::MailReport;

use super::email;

/// Words of `text` wrapped to `width` columns, each line starting with `prefix`.
fn wrap(text: &str, prefix: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::from(prefix);
    for word in text.split_whitespace() {
        let fits = line.chars().count() + 1 + word.chars().count() <= width;
        if line.len() > prefix.len() && !fits {
            out.push_str(line.trim_end());
            out.push('\n');
            line = String::from(prefix);
        }
        if line.len() > prefix.len() {
            line.push(' ');
        }
        // A single word longer than the line is cut, so the reply stays within `width`.
        let room = width.saturating_sub(line.chars().count()).max(1);
        if word.chars().count() > room {
            line.push_str(
                &word
                    .chars()
                    .take(room.saturating_sub(1))
                    .collect::<String>(),
            );
            line.push('~');
        } else {
            line.push_str(word);
        }
    }
    if line.len() > prefix.len() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `line 21: "2.9x reduction": claimed -65.5%, measured ... (series)`.
fn claim_line(c: &crate::mail::claims::Checked) -> String {
    let mut s = format!("line {}: \"{}\": {}", c.line, c.text, c.summary());
    if let Some(m) = &c.matched_series {
        s.push_str(&format!(" ({m})"));
    }
    s
}

/// Which blocks became base and head, for the terminal.
pub fn pairs_text(m: &MailReport) -> String {
    let mut out = format!(
        "{} blocks read as {}; compared:\n",
        m.mail.blocks.len(),
        m.mail.format
    );
    for p in &m.mail.pairs {
        out.push_str(&format!("  base {:?}\n  head {:?}\n", p.base, p.head));
        if let Some(s) = &p.scenario {
            out.push_str(&format!("  as scenario={s}\n"));
        }
    }
    out.push('\n');
    out
}

/// The claims, for the terminal.
pub fn plain(m: &MailReport) -> String {
    if m.claims.is_empty() {
        return "\nNo claimed change with a number found in the mail.\n".into();
    }
    let mut out = String::from("\nClaims in the mail:\n");
    for c in &m.claims {
        out.push_str(&format!("  {}\n", claim_line(c)));
    }
    out
}

/// The claims as a Markdown table.
pub fn markdown(m: &MailReport) -> String {
    let esc = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut out = String::from(
        "\n| line | claim | claimed | measured | series | status |\n|---:|---|---:|---:|---|---|\n",
    );
    for c in &m.claims {
        let pct = |v: Option<f64>| crate::format::percent(v, 1);
        out.push_str(&format!(
            "| {} | {} | {} | {} {} | {} | {} |\n",
            c.line,
            esc(&c.text),
            pct(c.claimed_change_pct),
            pct(c.measured_change_pct),
            c.measured_ci
                .map(|(lo, hi)| crate::format::percent_interval(lo, hi))
                .unwrap_or_default(),
            esc(c.matched_series.as_deref().unwrap_or("-")),
            c.status.as_str()
        ));
    }
    out
}

/// A reply within 72 columns: the block labels quoted, the report, the claims.
pub fn email(m: &MailReport) -> String {
    let mut out = String::new();
    for p in &m.mail.pairs {
        out.push_str(&wrap(&format!("base: {}", p.base), "> ", 72));
        out.push_str(&wrap(&format!("head: {}", p.head), "> ", 72));
    }
    out.push('\n');
    out.push_str(&email::text(&m.report));
    if !m.claims.is_empty() {
        out.push_str("\nClaims in the mail, against the numbers above:\n");
        for c in &m.claims {
            out.push_str(&wrap(&claim_line(c), "  ", 72));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wrap_stays_within_the_width() {
        let long = "Results with 100% load on one CPU and no load on 2nd CPU with reverted c229828ca6bc62d and a_very_long_word_that_does_not_fit_anywhere_on_one_line_at_all_really";
        let w = wrap(long, "> ", 40);
        assert!(w.lines().all(|l| l.chars().count() <= 40), "{w}");
        assert!(w.lines().all(|l| l.starts_with("> ")));
        assert!(w.contains("> Results with 100% load on one CPU and"), "{w}");
    }
}
