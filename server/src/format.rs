//! How numbers are printed: values in their units, percentages, p-values, times and counts of
//! things. One leaf module (it imports nothing of the server's) shared by the command line, the
//! pages and the exports, so a percent or a count reads the same everywhere.

/// A value in its unit, humanised (`564 us`, `49.393 s`, `2 KiB`, `4 us^2`).
pub fn human(value: f64, unit: impl AsRef<str>) -> String {
    match unit.as_ref() {
        "s" => human_seconds(value),
        "bytes" => human_bytes(value),
        "s^2" => human_seconds_squared(value),
        "count" => {
            if value.fract() == 0.0 && value.abs() < 1e15 {
                format!("{}", value as i64)
            } else {
                sig(value)
            }
        }
        // "1" is the stored unit of a plain number (a ratio, a score): nothing to print.
        "" | "1" => sig(value),
        u => format!("{} {u}", sig(value)),
    }
}

/// [`human`] of an optional value; `-` when it is missing or not finite.
pub fn value(v: Option<f64>, unit: impl AsRef<str>) -> String {
    match v {
        Some(v) if v.is_finite() => human(v, unit),
        _ => "-".into(),
    }
}

/// Seconds, milliseconds, microseconds or nanoseconds, whichever reads best.
pub fn human_seconds(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0 s".into()
    } else if a >= 1.0 {
        format!("{} s", sig(v))
    } else if a >= 1e-3 {
        format!("{} ms", sig(v * 1e3))
    } else if a >= 1e-6 {
        format!("{} us", sig(v * 1e6))
    } else {
        format!("{} ns", sig(v * 1e9))
    }
}

/// Variances of durations (trace_stat's s^2 column, often around 1e-15 s^2) in the unit that
/// reads best.
pub fn human_seconds_squared(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0 s^2".into()
    } else if a >= 1.0 {
        format!("{} s^2", sig(v))
    } else if a >= 1e-6 {
        format!("{} ms^2", sig(v * 1e6))
    } else if a >= 1e-12 {
        format!("{} us^2", sig(v * 1e12))
    } else {
        format!("{} ns^2", sig(v * 1e18))
    }
}

/// Bytes in B, KiB, MiB or GiB.
pub fn human_bytes(v: f64) -> String {
    let a = v.abs();
    if a >= 1024.0 * 1024.0 * 1024.0 {
        format!("{} GiB", sig(v / (1024.0 * 1024.0 * 1024.0)))
    } else if a >= 1024.0 * 1024.0 {
        format!("{} MiB", sig(v / (1024.0 * 1024.0)))
    } else if a >= 1024.0 {
        format!("{} KiB", sig(v / 1024.0))
    } else {
        format!("{v} B")
    }
}

/// Up to 6 significant digits without trailing zeros.
pub fn sig(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = 6i32;
    let mag = v.abs().log10().floor() as i32;
    let decimals = (digits - 1 - mag).clamp(0, 12) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// [`sig`] of an optional value; `-` when it is missing.
pub fn sig_or_dash(v: Option<f64>) -> String {
    v.map(sig).unwrap_or_else(|| "-".into())
}

/// A signed percentage with `decimals` decimals (`+3.2%`); `-` when missing or not finite.
/// Tables of many rows use one decimal, a single comparison's detail two.
pub fn percent(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:+.decimals$}%"),
        _ => "-".into(),
    }
}

/// A signed percentage interval (`[-1.2%, +3.4%]`).
pub fn percent_interval(low: f64, high: f64) -> String {
    format!("[{low:+.1}%, {high:+.1}%]")
}

/// A p- or q-value: 4 decimals, or scientific notation when below 1e-4; `-` when missing.
pub fn p_value(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() && v < 1e-4 => format!("{v:.1e}"),
        Some(v) if v.is_finite() => format!("{v:.4}"),
        _ => "-".into(),
    }
}

/// `YYYY-MM-DD HH:MM` (UTC) from unix seconds.
pub fn time(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// `noun` as it reads after a count of `n`: singular for 1, else with an `s` (the nouns
/// counted, `regression` or `alert`, take a plain one). Reports pasted into mail say
/// "1 improvement", not "1 improvements". The count is borrowed, as templates pass it.
pub fn noun<N: PartialEq + From<u8>>(n: &N, noun: &str) -> String {
    if *n == N::from(1) {
        noun.to_string()
    } else {
        format!("{noun}s")
    }
}

/// `n` with a comma between thousands, as a count reads in mail: `52,323`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `n` and its [`noun`]: `1 regression`, `3 regressions`.
pub fn count<N: PartialEq + From<u8> + std::fmt::Display>(n: N, singular: &str) -> String {
    format!("{n} {}", noun(&n, singular))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn humanises() {
        assert_eq!(human_seconds(0.000564), "564 us");
        assert_eq!(human_seconds(49.393), "49.393 s");
        assert_eq!(human_seconds(0.0012), "1.2 ms");
        assert_eq!(human_bytes(2048.0), "2 KiB");
        assert_eq!(sig(182650.3), "182650");
        assert_eq!(human(3.0, "count"), "3");
        assert_eq!(human(2.5, "1"), "2.5");
        assert_eq!(human(2.5, "ops/s"), "2.5 ops/s");
        assert_eq!(human(0.004e-12, "s^2"), "4000 ns^2");
        assert_eq!(human(30819.36e-12, "s^2"), "30819.4 us^2");
        assert_eq!(value(None, "s"), "-");
        assert_eq!(value(Some(f64::NAN), "s"), "-");
    }

    #[test]
    fn counts_take_the_singular_for_one_only() {
        assert_eq!(count(1, "improvement"), "1 improvement");
        assert_eq!(count(0, "regression"), "0 regressions");
        assert_eq!(count(3, "increase"), "3 increases");
        assert_eq!(noun(&2usize, "decrease"), "decreases");
        assert_eq!(count(1i64, "alert"), "1 alert");
    }

    #[test]
    fn groups_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(52323), "52,323");
        assert_eq!(grouped(1234567), "1,234,567");
    }

    #[test]
    fn percents_and_p_values() {
        assert_eq!(percent(Some(3.214), 1), "+3.2%");
        assert_eq!(percent(Some(-3.214), 2), "-3.21%");
        assert_eq!(percent(Some(f64::INFINITY), 1), "-");
        assert_eq!(percent(None, 1), "-");
        assert_eq!(percent_interval(-1.25, 3.4), "[-1.2%, +3.4%]");
        assert_eq!(p_value(Some(0.04321)), "0.0432");
        assert_eq!(p_value(Some(3e-7)), "3.0e-7");
        assert_eq!(p_value(None), "-");
    }

    #[test]
    fn formats_time() {
        assert_eq!(time(0), "1970-01-01 00:00");
        assert_eq!(time(1_700_000_000), "2023-11-14 22:13");
        assert_eq!(time(951_782_400 + 3_660), "2000-02-29 01:01");
    }
}
