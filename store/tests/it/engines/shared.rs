//! One database written by many: concurrent writers through one store, and two stores (two
//! servers) opened on the same database.

use store::{InputFile, NewShare, Placement, RunQuery, Store};

use super::{build_id, hb, meta};

both!(concurrent_writers_store_each_thing_once, |st| {
    // The same upload three times at once, and three different ones beside it.
    let mut tasks = Vec::new();
    for i in 0..6 {
        let st = st.clone();
        tasks.push(tokio::spawn(async move {
            let times: &[f64] = if i % 2 == 0 { &[1.0, 2.0] } else { &[i as f64] };
            st.import_run(&meta("v1", "hb"), &[hb("hb.txt", times)], None)
                .await
                .unwrap()
        }));
    }
    let mut outcomes = Vec::new();
    for t in tasks {
        outcomes.push(t.await.unwrap());
    }
    let same: Vec<_> = outcomes.iter().step_by(2).collect();
    assert_eq!(
        same.iter().filter(|o| o.created).count(),
        1,
        "one of the same uploads stores it"
    );
    assert!(same.iter().all(|o| o.run_ids == same[0].run_ids));
    assert!(outcomes.iter().skip(1).step_by(2).all(|o| o.created));
    let runs = st.runs(&RunQuery::default()).await.unwrap();
    assert_eq!(runs.len(), 4);
    assert!(runs.iter().all(|r| r.series == 1));
    assert_eq!(st.total_samples().await.unwrap(), 2 + 3);
    for r in &runs {
        let series = st.run_series(r.id).await.unwrap();
        assert_eq!(series.len(), 1);
        assert_eq!(series[0].values.len() as i64, r.samples);
    }

    // Tokens, shares and placements raced for the same name or content.
    let mut tasks = Vec::new();
    for i in 0..4 {
        let st = st.clone();
        tasks.push(tokio::spawn(async move {
            let token = st.insert_token("rig", &format!("h{i}")).await.unwrap();
            let share = NewShare {
                id: ["s0", "s1", "s2", "s3"][i],
                base_label: "v1",
                head_label: "v1",
                settings_json: "{}",
                base_runs_json: "[]",
                head_runs_json: "[]",
            };
            let shared = st.insert_share_once(&share, "same").await.unwrap();
            let b = build_id(&st, "v1").await;
            let branch = st.place_build(b, &Placement::main()).await.unwrap();
            (token, shared, branch)
        }));
    }
    let mut got = Vec::new();
    for t in tasks {
        got.push(t.await.unwrap());
    }
    assert_eq!(got.iter().filter(|g| g.0).count(), 1, "one token named rig");
    assert_eq!(st.tokens().await.unwrap().len(), 1);
    let shared = got[0].1.clone().unwrap();
    assert!(got.iter().all(|g| g.1.as_ref() == Some(&shared)));
    assert_eq!(st.share_by_content("same").await.unwrap(), Some(shared));
    assert!(got.iter().all(|g| g.2 == got[0].2), "one branch main");
    assert_eq!(st.branch_builds("main", 10).await.unwrap().len(), 1);
});

/// Two stores on one database (two servers): each sees what the other wrote.
async fn two_stores(a: Store, b: Store) {
    let m = meta("v1", "hb");
    let first = a
        .import_run(&m, &[hb("hb.txt", &[1.0])], None)
        .await
        .unwrap();
    assert!(first.created);
    let again = b
        .import_run(&m, &[hb("hb.txt", &[1.0])], None)
        .await
        .unwrap();
    assert!(!again.created, "the other store finds the same upload");
    assert_eq!(again.run_ids, first.run_ids);
    let second = b
        .import_run(&m, &[hb("hb.txt", &[2.0])], None)
        .await
        .unwrap();
    assert_eq!(a.generation().await.unwrap(), second.run_ids[0]);
    assert_eq!(a.runs(&RunQuery::default()).await.unwrap().len(), 2);
    assert!(b.insert_token("rig", "h").await.unwrap());
    assert!(!a.insert_token("rig", "h2").await.unwrap());
    assert_eq!(a.token_by_hash("h").await.unwrap().unwrap().name, "rig");
    names_stored_by_the_other(&a, &b).await;
    a.close().await;
    assert_eq!(b.runs(&RunQuery::default()).await.unwrap().len(), 6);
}

/// A generic CSV with one sample of each metric, valued 1, 2, ... in order.
fn csv(metrics: &[&str]) -> InputFile {
    let mut text = String::from("metric,value\n");
    for (i, m) in metrics.iter().enumerate() {
        text.push_str(&format!("{m},{}\n", i + 1));
    }
    InputFile::bytes("m.csv", text.into_bytes(), Some("samples".into()))
}

/// Each store knows the names it read: names the other stored since are found when an import
/// meets them, and take the ids they have (not the next ids this store would have given).
async fn names_stored_by_the_other(a: &Store, b: &Store) {
    let metrics = |st: &Store, run: i64| {
        let st = st.clone();
        async move {
            let mut got: Vec<(String, Vec<f64>)> = st
                .run_series(run)
                .await
                .unwrap()
                .into_iter()
                .filter(|s| s.scope == "all")
                .map(|s| (s.metric, s.values))
                .collect();
            got.sort_by(|x, y| x.0.cmp(&y.0));
            got
        }
    };
    let imported = |st: &Store, build: &str, names: &[&str]| {
        let (st, m, file) = (st.clone(), meta(build, "csv"), csv(names));
        async move {
            let out = st.import_run(&m, &[file], None).await.unwrap();
            assert!(out.created);
            out.run_ids[0]
        }
    };
    imported(a, "n1", &["a_one", "a_two"]).await;
    // `b` has not seen a_one nor a_two: a_two is a_one's id + 1, where b's new b_one would be.
    let run = imported(b, "n2", &["a_two", "b_one"]).await;
    let want = vec![
        ("a_two".to_string(), vec![1.0]),
        ("b_one".to_string(), vec![2.0]),
    ];
    assert_eq!(metrics(b, run).await, want);
    assert_eq!(metrics(a, run).await, want);
    // Now `a` meets b_one, and `b` only names it knows.
    let run = imported(a, "n3", &["b_one", "a_one", "a_three"]).await;
    let want = vec![
        ("a_one".to_string(), vec![2.0]),
        ("a_three".to_string(), vec![3.0]),
        ("b_one".to_string(), vec![1.0]),
    ];
    assert_eq!(metrics(b, run).await, want);
    let run = imported(b, "n4", &["a_one", "b_one"]).await;
    let want = vec![
        ("a_one".to_string(), vec![1.0]),
        ("b_one".to_string(), vec![2.0]),
    ];
    assert_eq!(metrics(a, run).await, want);
}

#[tokio::test]
async fn two_stores_on_one_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db").display().to_string();
    let a = Store::open(&path).await.unwrap();
    let b = Store::open(&path).await.unwrap();
    two_stores(a, b).await;
}

#[tokio::test]
async fn two_stores_on_one_postgres_database() {
    let Some(url) = store::testing::fresh_pg_url().await else {
        return;
    };
    let a = Store::open(&url).await.unwrap();
    // The second open finds the schema migrated already.
    let b = Store::open(&url).await.unwrap();
    assert!(a.is_postgres() && b.is_postgres());
    assert_eq!(a.engine(), "postgres");
    two_stores(a, b).await;
}
