//! Formats quiescent recognises but does not import: detection refuses them by name rather
//! than letting another parser mis-read them.

/// Names what `head` looks like when it is a known format that is not imported.
pub fn refuse(head: &str) -> Option<&'static str> {
    let mut trace_cmd_cpus = false;
    let mut trace_cmd_events = 0usize;
    for raw in head.lines().take(400) {
        let line = crate::lines::strip_mail(raw);
        if line.starts_with("# event histogram") || line.starts_with("# trigger info: hist:") {
            return Some("a histogram trigger (events/.../hist) output");
        }
        if line.starts_with("# tracer: hwlat") || line.contains("inner/outer(us):") {
            return Some("an hwlat tracer trace");
        }
        if line.contains("-torture:")
            && (line.contains("Start of test")
                || line.contains("Reader Pipe")
                || line.contains(" rtc: "))
        {
            return Some("rcutorture statistics");
        }
        if let Some(n) = line.strip_prefix("cpus=")
            && n.trim().bytes().all(|b| b.is_ascii_digit())
        {
            trace_cmd_cpus = true;
        }
        if trace_cmd_line(line) {
            trace_cmd_events += 1;
        }
        if line.starts_with("Average wakeup latency:") || line.starts_with("RT task timings:") {
            return Some("a trace-cmd report (-w wakeup latency summary)");
        }
    }
    if trace_cmd_cpus || trace_cmd_events >= 3 {
        return Some("a trace-cmd report");
    }
    None
}

/// `comm-pid [003] flags 162573.215752: event: payload`
fn trace_cmd_line(line: &str) -> bool {
    let Some(open) = line.find(" [") else {
        return false;
    };
    let rest = &line[open + 2..];
    let Some(close) = rest.find(']') else {
        return false;
    };
    if close == 0 || !rest[..close].trim().bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let after = &rest[close + 1..];
    // a timestamp `<sec>.<usec>:` followed by an event name and `:`
    after.split_whitespace().any(|tok| {
        tok.ends_with(':')
            && tok[..tok.len() - 1].contains('.')
            && tok[..tok.len() - 1]
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b'.')
    })
}
