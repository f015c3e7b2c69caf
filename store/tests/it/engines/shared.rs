//! One database written by many: concurrent writers through one store, and two stores (two
//! servers) opened on the same database.

use store::{NewShare, Placement, RunQuery, Store};

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
    a.close().await;
    assert_eq!(b.runs(&RunQuery::default()).await.unwrap().len(), 2);
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
