//! Golden tests of the `latency` format against `fixtures/latency/MANIFEST.md`, plus synthetic
//! variants (display-graph, several traces, the doubled `# tracer:` quirk) and bad input.

use std::path::Path;

use ingest::{Dataset, Direction, Unit};
use serde_json::{Value, json};

use crate::common::*;

/// Header values every trace is checked for.
pub(crate) struct Header<'a> {
    tracer: &'a str,
    kernel: &'a str,
    latency_us: f64,
    shown: u64,
    total: u64,
    cpu: u32,
    ncpus: u32,
    task: &'a str,
    pid: u64,
    started: Option<&'a str>,
    ended: Option<&'a str>,
    listed: usize,
}

#[track_caller]
pub(crate) fn check_header(ds: &Dataset, h: &Header<'_>) {
    let m = &ds.meta;
    assert_eq!(m["tracer"], h.tracer);
    assert_eq!(m["kernel_version"], h.kernel);
    samples_eq(ds.get("latency", "all").unwrap(), &[h.latency_us / 1e6]);
    samples_eq(ds.get("entries", "all").unwrap(), &[h.total as f64]);
    assert_eq!(m["entries_shown"], h.shown.to_string());
    assert_eq!(m["entries_total"], h.total.to_string());
    assert_eq!(m["cpu"], h.cpu.to_string());
    assert_eq!(m["ncpus"], h.ncpus.to_string());
    assert_eq!(m["task"], h.task);
    assert_eq!(m["pid"], h.pid.to_string());
    assert_eq!(m.get("started_at").map(String::as_str), h.started);
    assert_eq!(m.get("ended_at").map(String::as_str), h.ended);
    assert_eq!(m["entries_listed"], h.listed.to_string());
    assert_eq!(entries(ds).len(), h.listed);
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

pub(crate) fn entries(ds: &Dataset) -> &Vec<Value> {
    ds.extra["entries"].as_array().expect("entries extra")
}

pub(crate) fn stack(ds: &Dataset) -> Vec<&str> {
    ds.extra["stack"]
        .as_array()
        .expect("stack extra")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

/// An entry as `{comm, pid, cpu, flags, time_us, mark, func, parent}`.
pub(crate) fn entry(
    (comm, pid, cpu, flags): (&str, u64, u32, &str),
    t: f64,
    mark: Option<&str>,
    func: &str,
    parent: Option<&str>,
) -> Value {
    json!({"comm": comm, "pid": pid, "cpu": cpu, "flags": flags, "time_us": t, "mark": mark,
           "func": func, "parent": parent})
}

pub(crate) fn parse_text(text: &str) -> Dataset {
    let (summary, ds) = ingest::parse_bytes(Path::new("trace"), text.as_bytes(), None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(summary.format, "latency");
    ds
}

pub(crate) fn parse_err(bytes: &[u8], format: Option<&str>) -> ingest::Error {
    match ingest::parse_bytes(Path::new("trace"), bytes, format) {
        Ok((_, ds)) => panic!("expected an error, parsed {ds:?}"),
        Err(e) => e,
    }
}

#[test]
fn doc2635_irqsoff_old_format() {
    let ds = parse("latency/doc2635_irqsoff_2.6.26_12us.txt", "latency");
    check_header(
        &ds,
        &Header {
            tracer: "irqsoff",
            kernel: "2.6.26",
            latency_us: 12.0,
            shown: 3,
            total: 3,
            cpu: 1,
            ncpus: 2,
            task: "bash",
            pid: 3730,
            started: Some("sys_setpgid"),
            ended: Some("sys_setpgid"),
            listed: 3,
        },
    );
    let m = &ds.meta;
    assert_eq!(
        (
            m["preemption_model"].as_str(),
            m["uid"].as_str(),
            m["nice"].as_str()
        ),
        ("preempt", "0", "0")
    );
    assert_eq!((m["policy"].as_str(), m["rt_prio"].as_str()), ("0", "0"));
    let e = entries(&ds);
    assert_eq!(
        e[0],
        entry(
            ("bash", 3730, 1, "d..."),
            0.0,
            None,
            "_write_lock_irq",
            Some("sys_setpgid")
        )
    );
    assert_eq!(
        e[1],
        entry(
            ("bash", 3730, 1, "d..1"),
            1.0,
            Some("+"),
            "_write_unlock_irq",
            Some("sys_setpgid")
        )
    );
    // The last entry is past the recorded latency: the clock keeps running.
    assert_eq!(
        e[2],
        entry(
            ("bash", 3730, 1, "d..2"),
            14.0,
            None,
            "trace_hardirqs_on",
            Some("sys_setpgid")
        )
    );
    assert!(!ds.extra.contains_key("stack"));
    let lat = ds.get("latency", "all").unwrap();
    assert_eq!(
        (&lat.spec.unit, lat.spec.direction),
        (&Unit::Seconds, Direction::LowerIsBetter)
    );
    let n = ds.get("entries", "all").unwrap();
    assert_eq!(
        (&n.spec.unit, n.spec.direction),
        (&Unit::Count, Direction::Neutral)
    );
}

#[test]
fn doc2635_preemptoff_with_elisions() {
    let ds = parse(
        "latency/doc2635_preemptoff_2.6.26-rc8_63us_ftrace.txt",
        "latency",
    );
    check_header(
        &ds,
        &Header {
            tracer: "preemptoff",
            kernel: "2.6.26-rc8",
            latency_us: 63.0,
            shown: 87,
            total: 87,
            cpu: 0,
            ncpus: 2,
            task: "sshd",
            pid: 4261,
            started: Some("remove_wait_queue"),
            ended: Some("__do_softirq"),
            listed: 32,
        },
    );
    let e = entries(&ds);
    assert_eq!(
        e[0],
        entry(
            ("sshd", 4261, 0, "d..1"),
            0.0,
            None,
            "_spin_lock_irqsave",
            Some("remove_wait_queue")
        )
    );
    assert_eq!(
        e[31],
        entry(
            ("sshd", 4261, 0, "d.s1"),
            64.0,
            None,
            "trace_preempt_on",
            Some("__do_softirq")
        )
    );
}

#[test]
fn doc2635_preemptirqsoff_context_switch() {
    let ds = parse(
        "latency/doc2635_preemptirqsoff_2.6.26-rc8_105us_ftrace.txt",
        "latency",
    );
    check_header(
        &ds,
        &Header {
            tracer: "preemptirqsoff",
            kernel: "2.6.26-rc8",
            latency_us: 105.0,
            shown: 183,
            total: 183,
            cpu: 0,
            ncpus: 2,
            task: "sshd",
            pid: 4261,
            started: Some("write_chan"),
            ended: Some("__do_softirq"),
            listed: 56,
        },
    );
    let e = entries(&ds);
    assert_eq!(
        e[0],
        entry(
            ("ls", 4473, 0, ".N.."),
            0.0,
            None,
            "preempt_schedule",
            Some("write_chan")
        )
    );
    assert_eq!(
        e[55],
        entry(
            ("sshd", 4261, 0, "d.s1"),
            105.0,
            None,
            "trace_preempt_on",
            Some("__do_softirq")
        )
    );
    let comms: Vec<&str> = e.iter().map(|x| x["comm"].as_str().unwrap()).collect();
    let switch = comms.iter().position(|c| *c == "sshd").unwrap();
    assert!(
        comms[..switch].iter().all(|c| *c == "ls") && comms[switch..].iter().all(|c| *c == "sshd")
    );
    for flag in ['N', 'h', 'H', 's'] {
        assert!(
            e.iter()
                .any(|x| x["flags"].as_str().unwrap().contains(flag)),
            "{flag}"
        );
    }
}

#[test]
fn doc2635_wakeup_rt_task_no_sites() {
    let ds = parse(
        "latency/doc2635_wakeup_2.6.26-rc8_50us_ftrace.txt",
        "latency",
    );
    check_header(
        &ds,
        &Header {
            tracer: "wakeup",
            kernel: "2.6.26-rc8",
            latency_us: 50.0,
            shown: 60,
            total: 60,
            cpu: 1,
            ncpus: 2,
            task: "sleep",
            pid: 4068,
            started: None,
            ended: None,
            listed: 31,
        },
    );
    assert_eq!(
        (ds.meta["policy"].as_str(), ds.meta["rt_prio"].as_str()),
        ("2", "5")
    );
    let e = entries(&ds);
    // The 8-character comm at column 0.
    assert_eq!(
        e[0],
        entry(
            ("ksoftirq", 7, 1, "d.H3"),
            0.0,
            None,
            "try_to_wake_up",
            Some("wake_up_process")
        )
    );
    assert_eq!(
        e[30],
        entry(
            ("ksoftirq", 7, 1, "d..4"),
            50.0,
            None,
            "schedule",
            Some("__cond_resched")
        )
    );
}

#[test]
fn doc54_irqsoff_259us_with_stack() {
    let ds = parse("latency/doc54_irqsoff_3.8.0_259us.txt", "latency");
    check_header(
        &ds,
        &Header {
            tracer: "irqsoff",
            kernel: "3.8.0-test+",
            latency_us: 259.0,
            shown: 4,
            total: 4,
            cpu: 2,
            ncpus: 4,
            task: "ps",
            pid: 6143,
            started: Some("__lock_task_sighand"),
            ended: Some("_raw_spin_unlock_irqrestore"),
            listed: 4,
        },
    );
    assert_eq!(ds.meta["preemption_model"], "preempt");
    let e = entries(&ds);
    assert_eq!(
        e[0],
        entry(
            ("ps", 6143, 2, "d..."),
            0.0,
            Some("!"),
            "trace_hardirqs_off",
            Some("__lock_task_sighand")
        )
    );
    assert_eq!(
        e[1],
        entry(
            ("ps", 6143, 2, "d..1"),
            259.0,
            Some("+"),
            "trace_hardirqs_on",
            Some("_raw_spin_unlock_irqrestore")
        )
    );
    assert_eq!(
        e[2],
        entry(
            ("ps", 6143, 2, "d..1"),
            263.0,
            Some("+"),
            "time_hardirqs_on",
            Some("_raw_spin_unlock_irqrestore")
        )
    );
    assert_eq!(
        e[3],
        entry(("ps", 6143, 2, "d..1"), 306.0, None, "<stack trace>", None)
    );
    let s = stack(&ds);
    assert_eq!(s.len(), 10);
    assert_eq!(
        (s[0], s[9]),
        ("trace_hardirqs_on_caller", "system_call_fastpath")
    );
}

#[test]
fn doc54_irqsoff_16us_idle_and_slash_task() {
    let ds = parse("latency/doc54_irqsoff_3.8.0_16us.txt", "latency");
    check_header(
        &ds,
        &Header {
            tracer: "irqsoff",
            kernel: "3.8.0-test+",
            latency_us: 16.0,
            shown: 4,
            total: 4,
            cpu: 0,
            ncpus: 4,
            task: "swapper/0",
            pid: 0,
            started: Some("run_timer_softirq"),
            ended: Some("run_timer_softirq"),
            listed: 4,
        },
    );
    let e = entries(&ds);
    let times: Vec<f64> = e.iter().map(|x| x["time_us"].as_f64().unwrap()).collect();
    assert_eq!(times, [0.0, 17.0, 17.0, 25.0]);
    let marks: Vec<&Value> = e.iter().map(|x| &x["mark"]).collect();
    assert_eq!(
        marks,
        [&json!("+"), &Value::Null, &json!("+"), &Value::Null]
    );
    assert_eq!(e[0]["comm"], "<idle>");
    assert_eq!(
        (e[0]["flags"].as_str(), e[1]["flags"].as_str()),
        (Some("d.s2"), Some("dNs3"))
    );
    assert_eq!(e[3]["func"], "<stack trace>");
    let s = stack(&ds);
    assert_eq!(s.len(), 14);
    assert_eq!(
        (s[0], s[13]),
        ("_raw_spin_unlock_irq", "x86_64_start_kernel")
    );
}

#[test]
fn doc54_irqsoff_71us_function_trace() {
    let ds = parse(
        "latency/doc54_irqsoff_3.8.0_71us_function-trace.txt",
        "latency",
    );
    check_header(
        &ds,
        &Header {
            tracer: "irqsoff",
            kernel: "3.8.0-test+",
            latency_us: 71.0,
            shown: 168,
            total: 168,
            cpu: 3,
            ncpus: 4,
            task: "bash",
            pid: 2042,
            started: Some("ata_scsi_queuecmd"),
            ended: Some("ata_scsi_queuecmd"),
            listed: 19,
        },
    );
    let e = entries(&ds);
    assert_eq!(
        e[0],
        entry(
            ("bash", 2042, 3, "d..."),
            0.0,
            None,
            "_raw_spin_lock_irqsave",
            Some("ata_scsi_queuecmd")
        )
    );
    // Names with `.part.N` suffixes stay whole.
    assert_eq!(e[4]["func"], "ata_find_dev.part.14");
    assert_eq!(e[18]["func"], "<stack trace>");
    assert_eq!(e[18]["time_us"], 120.0);
    let s = stack(&ds);
    assert_eq!(s.len(), 25);
    assert_eq!(
        (s[0], s[24]),
        ("_raw_spin_unlock_irqrestore", "system_call_fastpath")
    );
}

#[test]
fn doc54_preemptoff_in_hardirq() {
    let ds = parse("latency/doc54_preemptoff_3.8.0_46us.txt", "latency");
    check_header(
        &ds,
        &Header {
            tracer: "preemptoff",
            kernel: "3.8.0-test+",
            latency_us: 46.0,
            shown: 4,
            total: 4,
            cpu: 1,
            ncpus: 4,
            task: "sshd",
            pid: 1991,
            started: Some("do_IRQ"),
            ended: Some("do_IRQ"),
            listed: 4,
        },
    );
    let e = entries(&ds);
    assert_eq!(
        e[0],
        entry(
            ("sshd", 1991, 1, "d.h."),
            0.0,
            Some("+"),
            "irq_enter",
            Some("do_IRQ")
        )
    );
    assert_eq!(
        e[1],
        entry(
            ("sshd", 1991, 1, "d..1"),
            46.0,
            None,
            "irq_exit",
            Some("do_IRQ")
        )
    );
    assert_eq!(
        e[2],
        entry(
            ("sshd", 1991, 1, "d..1"),
            47.0,
            Some("+"),
            "trace_preempt_on",
            Some("do_IRQ")
        )
    );
    assert_eq!(e[3]["time_us"], 52.0);
    assert_eq!(
        stack(&ds),
        ["sub_preempt_count", "irq_exit", "do_IRQ", "ret_from_intr"]
    );
}

#[test]
fn doc54_wakeup_sched_pseudo_entries() {
    let ds = parse("latency/doc54_wakeup_3.8.0_15us.txt", "latency");
    check_header(
        &ds,
        &Header {
            tracer: "wakeup",
            kernel: "3.8.0-test+",
            latency_us: 15.0,
            shown: 4,
            total: 4,
            cpu: 3,
            ncpus: 4,
            task: "kworker/3:1H",
            pid: 312,
            started: None,
            ended: None,
            listed: 4,
        },
    );
    assert_eq!(
        (ds.meta["nice"].as_str(), ds.meta["policy"].as_str()),
        ("-20", "0")
    );
    let e = entries(&ds);
    assert_eq!(
        e[0],
        entry(
            ("<idle>", 0, 3, "dNs7"),
            0.0,
            None,
            "0:120:R   + [003]   312:100:R kworker/3:1H",
            None
        )
    );
    assert_eq!(
        e[1],
        entry(
            ("<idle>", 0, 3, "dNs7"),
            1.0,
            Some("+"),
            "ttwu_do_activate.constprop.87",
            Some("try_to_wake_up")
        )
    );
    assert_eq!(
        e[2],
        entry(
            ("<idle>", 0, 3, "d..3"),
            15.0,
            None,
            "__schedule",
            Some("schedule")
        )
    );
    assert_eq!(
        e[3],
        entry(
            ("<idle>", 0, 3, "d..3"),
            15.0,
            None,
            "0:120:R ==> [003]   312:100:R kworker/3:1H",
            None
        )
    );
}

#[test]
fn doc54_wakeup_rt_function_trace() {
    let ds = parse("latency/doc54_wakeup_rt_3.8.0_29us_ftrace.txt", "latency");
    check_header(
        &ds,
        &Header {
            tracer: "wakeup_rt",
            kernel: "3.8.0-test+",
            latency_us: 29.0,
            shown: 85,
            total: 85,
            cpu: 3,
            ncpus: 4,
            task: "sleep",
            pid: 2448,
            started: None,
            ended: None,
            listed: 85,
        },
    );
    assert_eq!(
        (ds.meta["policy"].as_str(), ds.meta["rt_prio"].as_str()),
        ("1", "5")
    );
    let e = entries(&ds);
    assert_eq!(e[0]["func"], "0:120:R   + [003]  2448: 94:R sleep");
    assert_eq!(
        e[84],
        entry(
            ("<idle>", 0, 3, "d..3"),
            30.0,
            None,
            "0:120:R ==> [003]  2448: 94:R sleep",
            None
        )
    );
}

#[test]
fn rt_patch_trace_with_console_lines() {
    let ds = parse("latency/rt_preemption_2.6.17-rt1_1898us_smp.txt", "latency");
    check_header(
        &ds,
        &Header {
            tracer: "preemption",
            kernel: "2.6.17-rt1-smp-latency-trace",
            latency_us: 1898.0,
            shown: 78,
            total: 78,
            cpu: 1,
            ncpus: 2,
            task: "IRQ 233",
            pid: 2446,
            started: None,
            ended: None,
            listed: 46,
        },
    );
    let m = &ds.meta;
    assert_eq!(
        (
            m["preemption_model"].as_str(),
            m["sp"].as_str(),
            m["hp"].as_str()
        ),
        ("rt", "1", "1")
    );
    assert_eq!(
        (
            m["nice"].as_str(),
            m["policy"].as_str(),
            m["rt_prio"].as_str()
        ),
        ("-5", "1", "40")
    );
    let e = entries(&ds);
    assert_eq!(
        e[0],
        entry(
            ("softirq-", 5, 0, "...."),
            0.0,
            None,
            "__wake_up",
            Some("ksoftirqd")
        )
    );
    assert_eq!(
        e[45],
        entry(
            ("<...>", 2446, 0, "D..2"),
            12.0,
            Some("!"),
            "thread_return",
            Some("thread_return")
        )
    );
    // -rt pseudo entries `func <comm-pid> (a b)`.
    assert_eq!(e[12]["func"], "deactivate_task <softirq--5>");
    assert_eq!(e[12]["parent"], "101 1");
    // The header latency (1898 us) far exceeds the listed span (0..12 us).
    let span = e.last().unwrap()["time_us"].as_f64().unwrap();
    assert!(span < 1898.0);

    let console = ds.get("max_latency_console", "all").unwrap();
    let us = [
        8.0, 14.0, 19.0, 861.0, 862.0, 862.0, 868.0, 876.0, 879.0, 880.0, 882.0, 884.0, 884.0,
        885.0, 1826.0, 1827.0, 1828.0, 1831.0, 1832.0, 1834.0, 1836.0, 1838.0,
    ];
    samples_eq(console, &us.map(|u| u / 1e6));
    assert_eq!(console.spec.unit, Unit::Seconds);
    assert_eq!(m["console_lines"], "22");
    let c = ds.extra["console"].as_array().unwrap();
    assert_eq!(c.len(), 22);
    assert_eq!(
        c[0],
        json!({"comm": "posix_cpu_timer", "pid": 15, "cpu": 1, "latency_us": 8.0, "kind": "wakeup"})
    );
    assert_eq!(
        c[21],
        json!({"comm": "IRQ 233", "pid": 2446, "cpu": 0, "latency_us": 1838.0, "kind": "wakeup"})
    );
    assert_eq!(c[14]["comm"], "IRQ 14");
}

#[test]
fn seed002_summary_list() {
    let ds = parse(
        "latency/seed002_irqsoff_latency_summary_list.txt",
        "latency",
    );
    let expected = [
        ("one-disable", 564.0),
        ("one-enable", 567.0),
        ("ten-disable", 547.0),
        ("ten-enable", 549.0),
        ("hundred-disable", 580.0),
        ("hundred-enable", 581.0),
        ("full-disable", 9352.0),
        ("full-enable", 19081.0),
        ("hackbench", 3859.0),
    ];
    assert_eq!(ds.labels(), expected.map(|(l, _)| l));
    for (label, us) in expected {
        let s = ds.get_labelled("latency", "all", label).unwrap();
        samples_eq(s, &[us / 1e6]);
        assert_eq!(s.spec.unit, Unit::Seconds);
    }
    assert_eq!(ds.series.len(), 9);
    assert_eq!(ds.meta["full-disable.count"], "19043");
    assert_eq!(ds.meta["full-enable.count"], "19043");
    assert!(!ds.meta.contains_key("one-disable.count"));
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}
