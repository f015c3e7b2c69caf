//! Telling people about alert groups: the webhook (JSON, retried with backoff), the Atom feed
//! and the group as plain-text email ready for a mailing list (72 columns).

use std::time::Duration;

use store::{Alert, AlertFilter, Store};

/// An alert group as posted to the webhook and served by the API.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GroupPayload {
    pub group_id: i64,
    pub branch: String,
    pub build: String,
    pub alerts: Vec<Alert>,
}

/// The group's alerts; `None` for an unknown group.
pub async fn group(store: &Store, group_id: i64) -> anyhow::Result<Option<GroupPayload>> {
    let alerts = store
        .alerts(&AlertFilter {
            group_id: Some(group_id),
            ..AlertFilter::default()
        })
        .await?;
    let Some(first) = alerts.first() else {
        return Ok(None);
    };
    Ok(Some(GroupPayload {
        group_id,
        branch: first.branch.clone(),
        build: first.build_after.clone(),
        alerts,
    }))
}

/// One sender at a time: uploads arriving together each start a sender, and two senders
/// reading the same unsent group would post it twice.
static SENDING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Posts every group not yet sent to `url`; a group is marked sent once the receiver answered
/// 2xx. Each post is tried up to `attempts` times, waiting `backoff`, then twice as long...
pub async fn send_pending(
    store: &Store,
    url: &str,
    attempts: u32,
    backoff: Duration,
) -> anyhow::Result<usize> {
    let _one_sender = SENDING.lock().await;
    // And one among every server of the database, for the same reason.
    let one_sender_anywhere = store.lock_named("webhook sender").await?;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()?;
    let mut sent = 0;
    for id in store.unnotified_groups().await? {
        let Some(payload) = group(store, id).await? else {
            continue;
        };
        let mut wait = backoff;
        for attempt in 1..=attempts.max(1) {
            match client.post(url).json(&payload).send().await {
                Ok(r) if r.status().is_success() => {
                    store.mark_group_notified(id).await?;
                    sent += 1;
                    break;
                }
                Ok(r) => {
                    tracing::warn!(group = id, attempt, status = %r.status(), "webhook refused")
                }
                Err(e) => tracing::warn!(group = id, attempt, "webhook failed: {e}"),
            }
            if attempt < attempts {
                tokio::time::sleep(wait).await;
                wait *= 2;
            }
        }
    }
    one_sender_anywhere.release().await;
    Ok(sent)
}

/// Escapes text for XML.
fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// RFC 3339 of unix seconds.
fn rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// One line describing an alert.
fn alert_line(a: &Alert) -> String {
    let params = if a.params_key.is_empty() {
        String::new()
    } else {
        format!(" [{}]", a.params_key)
    };
    format!(
        "{} {}{} on {}: {:+.1}% ({}), q={:.2e}",
        a.benchmark, a.metric, params, a.machine, a.change_pct, a.kind, a.q
    )
}

/// The Atom feed of recent alert groups; `base` is the server's URL without a final slash.
pub fn atom(groups: &[GroupPayload], base: &str) -> String {
    let updated = groups
        .iter()
        .flat_map(|g| g.alerts.iter().map(|a| a.updated_at))
        .max()
        .unwrap_or(0);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
    out.push_str("<feed xmlns=\"http://www.w3.org/2005/Atom\">\n");
    out.push_str("<title>quiescent alerts</title>\n");
    out.push_str(&format!("<id>{}/alerts</id>\n", xml(base)));
    out.push_str(&format!(
        "<link rel=\"alternate\" href=\"{}/alerts\"/>\n",
        xml(base)
    ));
    out.push_str(&format!("<updated>{}</updated>\n", rfc3339(updated)));
    for g in groups {
        let t = g.alerts.iter().map(|a| a.created_at).min().unwrap_or(0);
        out.push_str("<entry>\n");
        out.push_str(&format!(
            "<title>{} at {} ({})</title>\n",
            crate::format::count(g.alerts.len(), "alert"),
            xml(&g.build),
            xml(&g.branch)
        ));
        out.push_str(&format!(
            "<id>{}/alerts#group-{}</id>\n",
            xml(base),
            g.group_id
        ));
        out.push_str(&format!(
            "<link href=\"{}/alerts?group={}\"/>\n",
            xml(base),
            g.group_id
        ));
        out.push_str(&format!("<updated>{}</updated>\n", rfc3339(t)));
        let text: Vec<String> = g.alerts.iter().map(alert_line).collect();
        out.push_str(&format!(
            "<content type=\"text\">{}</content>\n",
            xml(&text.join("\n"))
        ));
        out.push_str("</entry>\n");
    }
    out.push_str("</feed>\n");
    out
}

/// Wraps `text` at 72 columns, continuation lines indented by `indent`.
fn wrap(text: &str, indent: &str) -> String {
    let mut out = String::new();
    // The text's own leading spaces are kept on its first line.
    let lead = &text[..text.len() - text.trim_start().len()];
    let mut line = lead.to_string();
    for word in text.split_whitespace() {
        if !line.trim().is_empty() && line.len() + 1 + word.len() > 72 {
            out.push_str(&line);
            out.push('\n');
            line = indent.to_string();
        } else if !line.trim().is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// The group as plain-text email for a mailing list: no line over 72 columns.
pub fn email(g: &GroupPayload, base: &str) -> String {
    let mut out = wrap(
        &format!(
            "Subject: [quiescent] {} at {} ({})",
            crate::format::count(g.alerts.len(), "performance change"),
            g.build,
            g.branch
        ),
        " ",
    );
    out.push('\n');
    out.push_str(&wrap(
        &format!(
            "quiescent found {} whose new level starts at build {} on branch {}.",
            crate::format::count(g.alerts.len(), "change point"),
            g.build,
            g.branch
        ),
        "",
    ));
    out.push('\n');
    for a in &g.alerts {
        out.push_str(&wrap(&format!("* {}", alert_line(a)), "  "));
        out.push_str(&wrap(
            &format!(
                "  {} -> {}: median {} -> {}, interval {:+.1}% to {:+.1}%, p={:.2e}",
                a.build_before,
                a.build_after,
                crate::format::human(a.before_median, &a.unit),
                crate::format::human(a.after_median, &a.unit),
                a.low_pct,
                a.high_pct,
                a.p
            ),
            "  ",
        ));
    }
    out.push('\n');
    out.push_str(&wrap(
        &format!("Details: {base}/alerts?group={}", g.group_id),
        "",
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_known_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        // date -u -d @1700000000
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        // a leap day: date -u -d 2024-02-29T12:00:00Z +%s
        assert_eq!(rfc3339(1_709_208_000), "2024-02-29T12:00:00Z");
    }

    #[test]
    fn wrap_keeps_72_columns() {
        let long = "word ".repeat(60);
        let w = wrap(&long, "  ");
        assert!(w.lines().count() > 3);
        assert!(w.lines().all(|l| l.len() <= 72), "{w}");
    }
}
