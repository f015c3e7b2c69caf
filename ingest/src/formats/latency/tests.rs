use super::*;

#[test]
fn byte_helpers_match_str() {
    for t in [
        "",
        " (",
        "(",
        "a (b) (c)",
        "a(b (c)",
        "x (",
        " ( (",
        "\u{e9} (\u{e9}",
    ] {
        assert_eq!(rfind_space_paren(t), t.rfind(" ("), "{t:?}");
    }
    for t in [
        "",
        "        ",
        "         x ",
        "                 \u{a0}y",
        "\t        z",
        "        \t        \x0b w",
    ] {
        assert_eq!(lines::trim_start(t), t.trim_start(), "{t:?}");
    }
    for t in [
        "x",
        "a latency trace v1",
        "  latency trace v",
        "latency trace v",
    ] {
        assert_eq!(find_header(t), t.find(HEADER_NEEDLE), "{t:?}");
    }
}

#[test]
fn entries() {
    let e = parse_entry("    bash-3730  1d..1    1us+: _write_unlock_irq (sys_setpgid)").unwrap();
    assert_eq!(
        (e.comm, e.pid, e.cpu, e.flags),
        ("bash", Some(3730), Some(1), "d..1")
    );
    assert_eq!((e.time_us, e.mark), (1.0, Some("+")));
    assert_eq!(
        (e.func, e.parent),
        ("_write_unlock_irq", Some("sys_setpgid"))
    );
    let e =
        parse_entry("softirq--5     0D..2    2us : deactivate_task <softirq--5> (101 1)").unwrap();
    assert_eq!((e.comm, e.pid), ("softirq-", Some(5)));
    assert_eq!(
        (e.func, e.parent),
        ("deactivate_task <softirq--5>", Some("101 1"))
    );
    let e = parse_entry("IRQ 233-2446  0D..2   12us!: thread_return (thread_return)").unwrap();
    assert_eq!((e.comm, e.pid, e.mark), ("IRQ 233", Some(2446), Some("!")));
    let e = parse_entry(
        "<idle>-0       3dNs7    0us :      0:120:R   + [003]   312:100:R kworker/3:1H",
    )
    .unwrap();
    assert_eq!(e.func, "0:120:R   + [003]   312:100:R kworker/3:1H");
    assert_eq!(e.parent, None);
    assert!(parse_entry("[...]").is_none());
    assert!(parse_entry("Here is a typical trace:").is_none());
}

#[test]
fn graph_entries() {
    let e = parse_graph_entry(
        "       3 us |   0)   bash-1507    |  d..2 |   0.351 us    |              in_task_stack();",
    )
    .unwrap();
    assert_eq!(
        (e.comm, e.pid, e.cpu, e.flags),
        ("bash", Some(1507), Some(0), "d..2")
    );
    assert_eq!((e.time_us, e.duration_us), (3.0, Some(0.351)));
    assert_eq!(e.func, "in_task_stack();");
    let e = parse_graph_entry(
        "        1 us |   0)   bash-1507    |  d..2 |               |    set_track() {",
    )
    .unwrap();
    assert_eq!((e.duration_us, e.func), (None, "set_track() {"));
}

#[test]
fn summary_and_console() {
    assert_eq!(
        summary_line("full-disable: (19043)\t9352us"),
        Some(("full-disable", Some("19043"), 9352.0))
    );
    assert_eq!(
        summary_line("one-disable:\t\t564us"),
        Some(("one-disable", None, 564.0))
    );
    assert_eq!(
        summary_line("Funny how enabling 10 took less than one?"),
        None
    );
    let c =
        console_line("(         IRQ 233-2446 |#0): new 861 us maximum-latency wakeup.").unwrap();
    assert_eq!(
        (c.comm, c.pid, c.cpu, c.latency_us),
        ("IRQ 233", Some(2446), 0, 861.0)
    );
    assert_eq!(c.kind, "wakeup");
}

#[test]
fn metadata_past_the_cap_is_counted_and_warned_of_once() {
    // Many traces: their header fields pass the cap on metadata, after which the parser
    // only counts them; the warning comes once, at the line that passed the cap.
    let trace = include_str!("../../../tests/fixtures/latency/doc54_irqsoff_3.8.0_16us.txt");
    let text = trace.repeat(1_500);
    let (_, ds) = crate::parse_bytes(
        std::path::Path::new("many.txt"),
        text.as_bytes(),
        Some("latency"),
    )
    .unwrap();
    assert_eq!(ds.meta.len(), crate::model::MAX_METAS);
    let capped: Vec<_> = ds
        .warnings
        .iter()
        .filter(|w| w.message.contains("metadata values"))
        .collect();
    assert_eq!(capped.len(), 1, "{capped:?}");
    let line = capped[0].line as usize;
    let lines_per_trace = trace.lines().count();
    assert!(line > lines_per_trace * 100, "{line}");
    // The line is a header line of a trace (the cap is passed while reading one).
    let at = text.lines().nth(line - 1).unwrap();
    assert!(at.trim_start().starts_with('#'), "{at:?}");
}

/// The fields of a `latency:` line, read by the fast path (`None` when it leaves the line)
/// and by the general one.
fn latency_both(rest: &str) -> (Option<LatencyFields>, Option<LatencyFields>) {
    let fields = |l: header::LatencyLine<'_>| {
        (
            l.latency_us,
            l.shown,
            l.total,
            l.cpu.to_string(),
            l.model.to_string(),
        )
    };
    (
        fast::latency_line(rest).map(fields),
        header::latency_line(rest, 1).ok().map(fields),
    )
}

type LatencyFields = (f64, f64, f64, String, String);

#[test]
fn the_kernels_latency_line_takes_the_fast_path() {
    for rest in [
        " 71 us, #168/168, CPU#3 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:4)",
        " 12 us, #3/3, CPU#1 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:2)",
        " 5us, #0/12, CPU#15",
    ] {
        let (fast, general) = latency_both(rest);
        assert!(fast.is_some(), "{rest:?} left to the general path");
        assert_eq!(fast, general, "{rest:?}");
    }
    // Spellings only the general path reads, and one neither does.
    for rest in [
        " 7.5 us, #3/3, CPU#1",
        " 71 us, #1/2, CPU#3 x | (M:none)",
        "\t71 us, #1/2, CPU#0",
    ] {
        assert!(latency_both(rest).0.is_none(), "{rest:?}");
    }
    assert_eq!(latency_both(" 71 us #1/2, CPU#0"), (None, None));
}

proptest::proptest! {
    #[test]
    fn the_fast_latency_line_agrees_with_the_general_one(
        parts in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just(" 71 us".to_string()),
                proptest::strategy::Just(", #168/168".to_string()),
                proptest::strategy::Just(", CPU#3".to_string()),
                proptest::strategy::Just(" | (M:preempt VP:0, KP:0)".to_string()),
                "[0-9 ,.#/|]{0,4}",
                "(us|CPU#|\\t|x|\u{e9})",
            ],
            0..8,
        ),
    ) {
        let rest = parts.concat();
        let (fast, general) = latency_both(&rest);
        if fast.is_some() {
            proptest::prop_assert_eq!(fast, general, "{:?}", rest);
        }
    }

    #[test]
    fn find_header_agrees_with_str_find(
        parts in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just(HEADER_NEEDLE.to_string()),
                proptest::strategy::Just(" latency trace ".to_string()),
                proptest::strategy::Just("y".to_string()),
                proptest::strategy::Just("\u{e9}y".to_string()),
                "[a-z ]{0,9}",
            ],
            0..8,
        ),
    ) {
        let t = parts.concat();
        proptest::prop_assert_eq!(find_header(&t), t.find(HEADER_NEEDLE));
    }
}
