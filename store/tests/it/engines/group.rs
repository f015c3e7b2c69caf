//! Group commit: imports that become ready while another holds the write turn are written in
//! one transaction, each answered after the commit; one that fails in the transaction is
//! undone alone, and one whose file does not parse never reaches it.

use std::time::{Duration, Instant};

use store::{BuildMeta, Error, ImportOutcome, RunQuery, Store};

use super::{hb, meta};

fn with_commit(build: &str, commit: &str) -> store::RunMeta {
    let mut m = meta(build, "hackbench");
    m.build = BuildMeta {
        label: build.into(),
        commit: Some(commit.into()),
        ..Default::default()
    };
    m
}

async fn wait_queued(st: &Store, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while st.queued_imports() < n {
        assert!(
            Instant::now() < deadline,
            "{} of {n} imports queued",
            st.queued_imports()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

both!(
    imports_ready_together_commit_together_and_fail_alone,
    |st| {
        st.import_run(&with_commit("v1", "aaa"), &[hb("first.txt", &[1.0])], None)
            .await
            .unwrap();
        let turn = st.hold_write_turn().await;
        // Five good uploads, one whose build contradicts the stored one, and a twin of the first.
        let mut jobs = Vec::new();
        for i in 0..7 {
            let st = st.clone();
            jobs.push(tokio::spawn(async move {
                let (m, f) = match i {
                    5 => (with_commit("v1", "bbb"), hb("conflict.txt", &[9.0])),
                    6 => (meta("g", "hackbench"), hb("up0.txt", &[2.0, 2.5])),
                    _ => (
                        meta("g", "hackbench"),
                        hb(&format!("up{i}.txt"), &[2.0 + i as f64, 2.5]),
                    ),
                };
                st.import_upload(&m, &[f], None).await
            }));
        }
        wait_queued(&st, 7).await;
        // A file that does not parse is refused before it waits for the writer.
        let bad = tokio::time::timeout(
            Duration::from_secs(30),
            st.import_upload(
                &meta("g", "hackbench"),
                &[store::InputFile::bytes(
                    "bad.txt",
                    b"Time: twelve\n".to_vec(),
                    Some("hackbench".into()),
                )],
                None,
            ),
        )
        .await
        .expect("a file that does not parse waited for the writer");
        assert!(matches!(bad, Err(Error::Parse(_))), "{bad:?}");
        assert_eq!(st.queued_imports(), 7);
        drop(turn);

        let mut done: Vec<Result<ImportOutcome, Error>> = Vec::new();
        for j in jobs {
            done.push(j.await.unwrap());
        }
        let conflict = done.remove(5);
        match conflict {
            Err(Error::Invalid(m)) => assert!(m.contains("different commit"), "{m}"),
            other => panic!("the contradicting build was not refused alone: {other:?}"),
        }
        let ok: Vec<ImportOutcome> = done.into_iter().map(Result::unwrap).collect();
        // The twins: one stored, the other answered with the same run.
        let (a, b) = (&ok[0], &ok[5]);
        assert_eq!(a.run_ids, b.run_ids);
        assert_eq!(u8::from(a.created) + u8::from(b.created), 1);
        let mut ids: Vec<i64> = ok[..5].iter().flat_map(|o| o.run_ids.clone()).collect();
        assert!(ok[..5].iter().all(|o| o.created || o.run_ids == b.run_ids));
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 5, "five distinct runs: {ids:?}");
        let runs = st.runs(&RunQuery::default()).await.unwrap();
        assert_eq!(runs.len(), 6, "the first run and five uploads");
        // Nothing of the refused upload: its samples and its build's commit are not there.
        assert_eq!(st.total_samples().await.unwrap(), 1 + 5 * 2);
        let v1 = st.build_by_label("v1").await.unwrap().unwrap();
        assert_eq!(v1.build.commit.as_deref(), Some("aaa"));
    }
);
