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

/// Waits (a minute at most) until `done` holds; `what` says what did not happen.
async fn wait_until(done: impl Fn() -> bool, what: impl Fn() -> String) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "{}", what());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Asserts that run `id` holds `files` byte for byte under their names (upload `i`); their
/// artifact ids.
async fn files_read_back(st: &Store, id: i64, files: &[store::InputFile], i: u32) -> Vec<i64> {
    let stored = st.run_artifacts(id, None).await.unwrap();
    assert_eq!(stored.len(), files.len(), "upload {i}");
    for (a, f) in stored.iter().zip(files) {
        assert_eq!(a.file_name, f.name, "upload {i}");
        let mut bytes = Vec::new();
        st.read_artifact(a.artifact_id, &mut bytes).await.unwrap();
        let store::Source::Bytes(want) = &f.source else {
            unreachable!()
        };
        assert_eq!(bytes.as_slice(), &want[..], "upload {i}, {}", f.name);
    }
    stored.iter().map(|a| a.artifact_id).collect()
}

/// Every sample of run `id`, in order.
async fn samples_of(st: &Store, id: i64) -> Vec<f64> {
    let mut values: Vec<f64> = st
        .run_series(id)
        .await
        .unwrap()
        .into_iter()
        .flat_map(|s| s.values)
        .collect();
    values.sort_by(f64::total_cmp);
    values
}

/// Waits (a minute at most) until `n` imports wait for the write turn.
pub(super) async fn wait_queued(st: &Store, n: usize) {
    wait_until(
        || st.queued_imports() >= n,
        || format!("{} of {n} imports queued", st.queued_imports()),
    )
    .await;
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
        // Nothing of the refused upload: its samples, its build's commit and its file are not
        // there (the group's attempt to write all seven together stored the file first).
        assert_eq!(st.total_samples().await.unwrap(), 1 + 5 * 2);
        let store::Source::Bytes(refused) = &hb("conflict.txt", &[9.0]).source else {
            unreachable!()
        };
        assert!(
            !st.has_artifact(refused).await.unwrap(),
            "the refused file was kept"
        );
        let v1 = st.build_by_label("v1").await.unwrap().unwrap();
        assert_eq!(v1.build.commit.as_deref(), Some("aaa"));
    }
);

both!(
    a_group_with_nothing_new_to_name_is_written_together_and_reads_back_as_uploaded,
    |st| {
        // The names the uploads use are stored first: the group then has nothing new to name.
        st.import_run(&meta("v1", "hackbench"), &[hb("first.txt", &[1.0])], None)
            .await
            .unwrap();
        let turn = st.hold_write_turn().await;
        // Two builds (one new, with a commit), two parameter sets, two files in one upload.
        let mut jobs = Vec::new();
        for i in 0..6u32 {
            let st = st.clone();
            jobs.push(tokio::spawn(async move {
                let mut m = if i % 2 == 0 {
                    meta("v1", "hackbench")
                } else {
                    with_commit("v2", "ccc")
                };
                m.params
                    .insert("threads".into(), (4 * (i % 3 + 1)).to_string());
                let mut files = vec![hb(&format!("up{i}.txt"), &[10.0 + f64::from(i), 20.5])];
                if i == 5 {
                    files.push(hb("second.txt", &[30.0]));
                }
                let out = st.import_upload(&m, &files, None).await;
                (i, m, files, out)
            }));
        }
        wait_queued(&st, 6).await;
        let before = st.groups_written_together();
        drop(turn);
        let mut seen = Vec::new();
        for j in jobs {
            let (i, m, files, out) = j.await.unwrap();
            let out = out.unwrap();
            assert!(out.created, "upload {i} not stored");
            assert_eq!(out.run_ids.len(), 1, "upload {i}: {out:?}");
            let id = out.run_ids[0];
            seen.push(id);
            let run = st.run(id).await.unwrap().unwrap();
            assert_eq!(run.build.label, m.build.label, "upload {i}");
            assert_eq!(run.params, m.params, "upload {i}");
            // Every sample of the upload, in its run.
            let values = samples_of(&st, id).await;
            let mut want = vec![10.0 + f64::from(i), 20.5];
            if i == 5 {
                want.push(30.0);
            }
            assert_eq!(values, want, "upload {i}");
            // Its files, byte for byte, under their names.
            files_read_back(&st, id, &files, i).await;
        }
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 6, "six distinct runs");
        assert_eq!(
            st.groups_written_together(),
            before + 1,
            "the six uploads were not written as one group"
        );
        let v2 = st.build_by_label("v2").await.unwrap().unwrap();
        assert_eq!(v2.build.commit.as_deref(), Some("ccc"));
        assert_eq!(st.total_samples().await.unwrap(), 1 + 6 * 2 + 1);
    }
);

both!(
    a_group_mixing_stored_and_new_files_links_each_run_to_its_own_bytes,
    |st| {
        // The group's new rows get their ids from the writer (SQLite) or the database
        // (PostgreSQL); a file stored before keeps its artifact.
        let first = st
            .import_run(&meta("v1", "hackbench"), &[hb("first.txt", &[1.0])], None)
            .await
            .unwrap();
        let first_file = st.run_artifacts(first.run_ids[0], None).await.unwrap()[0].artifact_id;
        let turn = st.hold_write_turn().await;
        let mut jobs = Vec::new();
        for i in 0..5u32 {
            let st = st.clone();
            jobs.push(tokio::spawn(async move {
                // Upload 2 sends the stored file again beside a new one, under another build.
                let mut files = vec![hb(&format!("new{i}.txt"), &[5.0 + f64::from(i)])];
                if i == 2 {
                    files.insert(0, hb("first.txt", &[1.0]));
                }
                let out = st
                    .import_upload(&meta("v2", "hackbench"), &files, None)
                    .await;
                (i, files, out)
            }));
        }
        wait_queued(&st, 5).await;
        let before = st.groups_written_together();
        drop(turn);
        let (mut runs, mut artifacts) = (Vec::new(), vec![first_file]);
        for j in jobs {
            let (i, files, out) = j.await.unwrap();
            let out = out.unwrap();
            assert!(out.created, "upload {i} not stored");
            let id = out.run_ids[0];
            runs.push(id);
            let stored = files_read_back(&st, id, &files, i).await;
            if i == 2 {
                assert_eq!(stored[0], first_file, "the stored file was stored again");
            }
            artifacts.extend(stored);
            let values = samples_of(&st, id).await;
            let mut want = vec![5.0 + f64::from(i)];
            if i == 2 {
                want.insert(0, 1.0);
            }
            assert_eq!(values, want, "upload {i}");
        }
        runs.sort_unstable();
        runs.dedup();
        assert_eq!(runs.len(), 5);
        assert!(
            runs[0] > first.run_ids[0],
            "a run id was given twice: {runs:?}"
        );
        assert_eq!(st.groups_written_together(), before + 1);
        // One artifact per distinct file: the stored one and five new.
        artifacts.sort_unstable();
        artifacts.dedup();
        assert_eq!(artifacts.len(), 6, "{artifacts:?}");
    }
);

both!(
    uploads_arriving_while_the_database_is_busy_join_the_waiting_group,
    |st| {
        // Another server's writer holds the database: this process's writer, once it has the
        // turn, waits to begin. Uploads arriving meanwhile must join its group, not queue for
        // a transaction of their own after it (on four servers, most of the waiting is this).
        st.import_run(&meta("v1", "hackbench"), &[hb("first.txt", &[1.0])], None)
            .await
            .unwrap();
        let other = st.hold_database_write_lock().await.unwrap();
        let (groups, together) = (st.groups_written(), st.groups_written_together());
        let upload = |i: u32| {
            let st = st.clone();
            tokio::spawn(async move {
                let files = [hb(&format!("up{i}.txt"), &[10.0 + f64::from(i)])];
                st.import_upload(&meta("v1", "hackbench"), &files, None)
                    .await
            })
        };
        let mut jobs = vec![upload(0)];
        // The first upload's task takes the turn and waits for the database.
        wait_until(
            || st.write_turn_taken(),
            || "no writer took the turn".into(),
        )
        .await;
        jobs.extend((1..5).map(upload));
        wait_queued(&st, 5).await;
        drop(other);
        for j in jobs {
            assert!(j.await.unwrap().unwrap().created);
        }
        assert_eq!(
            st.groups_written(),
            groups + 1,
            "the uploads that arrived while the writer waited got a transaction of their own"
        );
        assert_eq!(st.groups_written_together(), together + 1);
        assert_eq!(st.total_samples().await.unwrap(), 1 + 5);
    }
);

both!(
    a_group_holding_an_upload_stored_before_writes_the_others_and_answers_it_with_its_runs,
    |st| {
        let first = st
            .import_upload(
                &meta("v1", "hackbench"),
                &[hb("again.txt", &[1.0, 1.5])],
                None,
            )
            .await
            .unwrap();
        assert!(first.created);
        let samples = st.total_samples().await.unwrap();
        let turn = st.hold_write_turn().await;
        // The same upload again among new ones: the group cannot be written together, and
        // nothing it began to write may stay.
        let mut jobs = Vec::new();
        for i in 0..4u32 {
            let st = st.clone();
            jobs.push(tokio::spawn(async move {
                let f = if i == 2 {
                    hb("again.txt", &[1.0, 1.5])
                } else {
                    hb(&format!("new{i}.txt"), &[5.0 + f64::from(i)])
                };
                (
                    i,
                    st.import_upload(&meta("v1", "hackbench"), &[f], None).await,
                )
            }));
        }
        wait_queued(&st, 4).await;
        let before = st.groups_written_together();
        drop(turn);
        for j in jobs {
            let (i, out) = j.await.unwrap();
            let out = out.unwrap();
            if i == 2 {
                assert!(!out.created, "the upload stored before was stored again");
                assert_eq!(out.run_ids, first.run_ids);
            } else {
                assert!(out.created, "upload {i} not stored");
                let values: Vec<f64> = st
                    .run_series(out.run_ids[0])
                    .await
                    .unwrap()
                    .into_iter()
                    .flat_map(|s| s.values)
                    .collect();
                assert_eq!(values, vec![5.0 + f64::from(i)], "upload {i}");
            }
        }
        assert_eq!(
            st.groups_written_together(),
            before,
            "written together all the same"
        );
        assert_eq!(st.runs(&RunQuery::default()).await.unwrap().len(), 4);
        assert_eq!(st.total_samples().await.unwrap(), samples + 3);
    }
);

both!(
    a_revoked_tokens_uploads_are_refused_in_the_group_and_the_others_stored,
    |st| {
        // The server takes a token it looked up lately without asking again: the group's
        // transaction is what refuses the uploads of a token revoked meanwhile.
        let mut ids = Vec::new();
        for name in ["rig-a", "rig-b"] {
            assert!(
                st.insert_token(name, &format!("hash-{name}"))
                    .await
                    .unwrap()
            );
            let t = st.token_by_hash(&format!("hash-{name}")).await.unwrap();
            ids.push(t.expect("the token just stored").id);
        }
        // Revoked after the server let its uploads in: they reach the store all the same.
        assert_eq!(st.revoke_token("rig-a").await.unwrap(), store::Revoked::Now);
        let turn = st.hold_write_turn().await;
        let mut jobs = Vec::new();
        for i in 0..4u32 {
            let st = st.clone();
            let mut m = meta("g", "hackbench");
            m.token_id = Some(ids[i as usize % 2]);
            jobs.push(tokio::spawn(async move {
                let f = hb(&format!("up{i}.txt"), &[10.0 + f64::from(i)]);
                (i, st.import_upload(&m, &[f], None).await)
            }));
        }
        // One group, both tokens' uploads in it.
        wait_queued(&st, 4).await;
        drop(turn);
        for j in jobs {
            let (i, out) = j.await.unwrap();
            if i % 2 == 0 {
                match out {
                    Err(e @ Error::Revoked { .. }) => {
                        let m = e.to_string();
                        assert!(m.contains("\"rig-a\" was revoked"), "upload {i}: {m}")
                    }
                    other => panic!("upload {i} of the revoked token: {other:?}"),
                }
            } else {
                assert!(out.unwrap().created, "upload {i} of the other token");
            }
        }
        assert_eq!(st.runs(&RunQuery::default()).await.unwrap().len(), 2);
        assert_eq!(st.total_samples().await.unwrap(), 2);
        for i in [0u32, 2] {
            let store::Source::Bytes(refused) =
                &hb(&format!("up{i}.txt"), &[10.0 + f64::from(i)]).source
            else {
                unreachable!()
            };
            assert!(
                !st.has_artifact(refused).await.unwrap(),
                "upload {i}'s file"
            );
        }
    }
);
