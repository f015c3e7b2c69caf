//! Unit tests of finding and checking claims, with sentences from real mails.

use super::*;

fn measured(metric: &str, direction: Direction, change: f64, ci: Option<(f64, f64)>) -> Measured {
    Measured {
        name: metric.to_string(),
        metric: metric.to_string(),
        direction,
        change_pct: change,
        ci,
    }
}

#[test]
fn ratio_reduction_across_lines() {
    let text = "The baseline sum of the \"Hit\" values (the number of calls to this\n\
                function) was 3,319,015. With this commit, that sum was 1,140,359,\n\
                for a 2.9x reduction. The worst-case variance across the CPUs was less\n";
    let c = find(text);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].text, "2.9x reduction");
    assert_eq!(c[0].line, 3);
    let pct = c[0].change_pct(Direction::Neutral).unwrap();
    // 1/2.9 - 1 = -0.6552
    assert!((pct + 65.517).abs() < 0.01, "{pct}");
}

#[test]
fn from_to_with_units() {
    let c = find("> Going from 4.32 seconds down to 3.6 seconds is an improvement, but\n");
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].text, "from 4.32 seconds down to 3.6 seconds");
    let pct = c[0].change_pct(Direction::LowerIsBetter).unwrap();
    assert!((pct + 16.667).abs() < 0.01, "{pct}");
    let c = find("The build went from 900 ms to 1.2 s on this machine.\n");
    assert!((c[0].change_pct(Direction::Neutral).unwrap() - 33.333).abs() < 0.01);
}

#[test]
fn improvement_takes_the_metric_direction() {
    let c = find("This patch improves by 5% the hackbench time on my box.\n");
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].change_pct(Direction::LowerIsBetter), Some(-5.0));
    assert_eq!(c[0].change_pct(Direction::HigherIsBetter), Some(5.0));
    assert_eq!(c[0].change_pct(Direction::Neutral), None);
    let c = find("We see a 12% regression in throughput with the series applied.\n");
    assert_eq!(c[0].change_pct(Direction::HigherIsBetter), Some(-12.0));
}

#[test]
fn bare_signed_percent_only_in_prose() {
    let c = find("Overall elapsed time is -3.8% with the series on this machine.\n");
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].sense, Sense::Change(-3.8));
    // A table row is no claim.
    assert!(
        find("      0.10 ±  5%     -3.8%   0.09 ±  4%  will-it-scale.per_thread_ops\n").is_empty()
    );
    assert!(find("Amean     1       0.4000 (   0.00%)      0.3967 *   0.83%*\n").is_empty());
}

#[test]
fn no_numbers_no_claims() {
    assert!(find("This looks like an improvement to me, thanks.\n").is_empty());
}

#[test]
fn status_rule() {
    // In the interval.
    assert_eq!(
        status(-65.0, -65.1, Some((-70.9, -60.4))),
        Status::Consistent
    );
    // Outside the interval but within rounding (10% of the claim).
    assert_eq!(status(-65.5, -60.0, None), Status::Consistent);
    // Twice the measured change.
    assert_eq!(
        status(-20.0, -10.0, Some((-12.0, -8.0))),
        Status::Overstated
    );
    assert_eq!(
        status(-5.0, -20.0, Some((-22.0, -18.0))),
        Status::Understated
    );
    // The other way.
    assert_eq!(status(-10.0, 8.0, Some((5.0, 11.0))), Status::NotSupported);
    // No change is as plausible.
    assert_eq!(status(-10.0, -2.0, Some((-5.0, 1.0))), Status::NotSupported);
    // The claim lies in a wide interval that holds 0 as well: not supported.
    assert_eq!(
        status(-12.0, 73.6, Some((-37.2, 78.5))),
        Status::NotSupported
    );
    // In an interval away from 0, beyond rounding: consistent.
    assert_eq!(
        status(-30.0, -45.0, Some((-50.0, -25.0))),
        Status::Consistent
    );
    // One run each side, nothing measured.
    assert_eq!(status(5.0, 0.2, None), Status::NotSupported);
}

#[test]
fn check_prefers_the_series_the_claim_names() {
    let c = find("That sum of hits went down, for a 2.9x reduction of the calls.\n");
    let series = [
        measured("func.time", Direction::LowerIsBetter, -65.0, None),
        measured("func.hit", Direction::Neutral, -65.6, None),
        measured("func.avg", Direction::LowerIsBetter, 1.0, None),
    ];
    let r = check(&c, &series);
    assert_eq!(r[0].matched_series.as_deref(), Some("func.hit"));
    assert_eq!(r[0].status, Status::Consistent);
    assert!(
        r[0].summary()
            .starts_with("claimed -65.5%, measured -65.6%"),
        "{}",
        r[0].summary()
    );
}

#[test]
fn check_without_series_is_unmatched() {
    let c = find("This gives a 10% improvement in boot time overall.\n");
    let r = check(&c, &[]);
    assert_eq!(r[0].status, Status::Unmatched);
}

#[test]
fn a_note_after_a_table_row_is_a_claim_but_perf_spreads_are_not() {
    let found = find("sys\t\t1m30.734s\t\t1m8.900s (-25%)\n");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].sense, Sense::Change(-25.0));
    assert!(find("  2.35717 +- 0.00607 seconds time elapsed  ( +-  0.26% )\n").is_empty());
    assert!(find("Hmean  send-64  178.15 (   0.00%)  182.29 (   2.32%)\n").is_empty());
}
