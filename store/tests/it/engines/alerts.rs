//! Alerts: recorded once, listed with filters, triaged, grouped by build and notified.

use store::{
    Alert, AlertFilter, AlertGroup, Error, HistoryKey, KeyFilter, NewAlert, Placement, Triage,
};

use super::{build_id, run_of};

fn alert(hs: i64, branch: i64, before: i64, after: i64, change_pct: f64) -> NewAlert {
    NewAlert {
        history_series_id: hs,
        branch_id: branch,
        build_before_id: before,
        build_after_id: after,
        before_median: 1.0,
        after_median: 1.0 + change_pct / 100.0,
        change_pct,
        low_pct: change_pct - 5.0,
        high_pct: change_pct + 5.0,
        p: 0.001,
        q: 0.01,
        kind: if change_pct > 0.0 {
            "regression"
        } else {
            "improvement"
        }
        .into(),
    }
}

fn triage(state: &str, note: Option<&str>, fixed_by: Option<&str>) -> Triage {
    Triage {
        state: state.into(),
        note: note.map(str::to_string),
        who: "ana".into(),
        fixed_by: fixed_by.map(str::to_string),
    }
}

both!(alerts_are_recorded_listed_triaged_and_grouped, |st| {
    for b in ["v1", "v2", "v3"] {
        run_of(&st, b, "rig-a", "hb", &[1.0, 2.0]).await;
        run_of(&st, b, "rig-b", "pipe", &[3.0]).await;
        let id = build_id(&st, b).await;
        st.place_build(id, &Placement::main()).await.unwrap();
    }
    let (v1, v2, v3) = (
        build_id(&st, "v1").await,
        build_id(&st, "v2").await,
        build_id(&st, "v3").await,
    );
    let keys = st.history_keys(&KeyFilter::default()).await.unwrap();
    assert_eq!(keys.len(), 2);
    let (hb, pipe) = (&keys[0], &keys[1]);
    assert_eq!(
        (hb.benchmark.as_str(), pipe.benchmark.as_str()),
        ("hb", "pipe")
    );
    let main = hb.branch_id;

    // The detector's p-values per series: one row per key, updated in place.
    let hs1 = st
        .save_history_series(hb, "lower_is_better", "s", &[0.5, 0.25])
        .await
        .unwrap();
    assert_eq!(
        st.save_history_series(hb, "lower_is_better", "s", &[0.5, 0.001])
            .await
            .unwrap(),
        hs1
    );
    let hs2 = st
        .save_history_series(pipe, "lower_is_better", "s", &[])
        .await
        .unwrap();
    let other = HistoryKey {
        metric: "ops".into(),
        ..hb.clone()
    };
    let hs3 = st
        .save_history_series(&other, "higher_is_better", "ops/s", &[0.75])
        .await
        .unwrap();
    assert_eq!(
        st.benchmark_tested_p(main, "hb").await.unwrap(),
        [(hs1, vec![0.5, 0.001]), (hs3, vec![0.75])]
    );
    assert_eq!(
        st.benchmark_tested_p(main, "pipe").await.unwrap(),
        [(hs2, vec![])]
    );
    assert!(
        st.benchmark_tested_p(main, "nope")
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        st.benchmark_tested_p(main + 1000, "hb")
            .await
            .unwrap()
            .is_empty()
    );

    // Recorded once; alerts of one build on one branch share a group.
    assert!(st.unnotified_groups().await.unwrap().is_empty());
    let g1 = st
        .insert_alert(&alert(hs1, main, v1, v2, 50.0))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        st.insert_alert(&alert(hs1, main, v1, v2, 60.0))
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        st.insert_alert(&alert(hs2, main, v1, v2, -20.0))
            .await
            .unwrap(),
        Some(g1)
    );
    let g2 = st
        .insert_alert(&alert(hs1, main, v2, v3, 10.0))
        .await
        .unwrap()
        .unwrap();
    assert!(g2 > g1);

    let list = |f: AlertFilter| {
        let st = st.clone();
        async move { st.alerts(&f).await.unwrap() }
    };
    let all = list(AlertFilter::default()).await;
    let rows: Vec<_> = all
        .iter()
        .map(|a| (a.group_id, a.benchmark.as_str(), a.change_pct))
        .collect();
    assert_eq!(
        rows,
        [(g2, "hb", 10.0), (g1, "hb", 50.0), (g1, "pipe", -20.0)],
        "newest group first, largest change first"
    );
    let a1 = &all[1];
    assert_eq!(
        a1,
        &Alert {
            id: a1.id,
            group_id: g1,
            branch: "main".into(),
            benchmark: "hb".into(),
            params_key: String::new(),
            metric: "time".into(),
            machine: "rig-a".into(),
            build_before: "v1".into(),
            build_after: "v2".into(),
            before_median: 1.0,
            after_median: 1.5,
            change_pct: 50.0,
            low_pct: 45.0,
            high_pct: 55.0,
            p: 0.001,
            q: 0.01,
            kind: "regression".into(),
            state: "untriaged".into(),
            note: None,
            who: None,
            fixed_by: None,
            created_at: a1.created_at,
            updated_at: a1.created_at,
            unit: "s".into(),
        }
    );
    assert!(a1.created_at > 0);
    let (id1, id2, id3) = (all[1].id, all[2].id, all[0].id);
    let ids = |v: Vec<Alert>| v.iter().map(|a| a.id).collect::<Vec<_>>();
    let by = |f: fn(&mut AlertFilter)| {
        let mut a = AlertFilter::default();
        f(&mut a);
        a
    };
    assert_eq!(
        ids(list(by(|f| f.state = Some("untriaged".into()))).await).len(),
        3
    );
    assert_eq!(
        ids(list(by(|f| f.benchmark = Some("pipe".into()))).await),
        [id2]
    );
    assert_eq!(
        ids(list(by(|f| f.machine = Some("rig-a".into()))).await),
        [id3, id1]
    );
    assert_eq!(
        ids(list(by(|f| f.branch = Some("main".into()))).await).len(),
        3
    );
    assert!(
        list(by(|f| f.branch = Some("ghost".into())))
            .await
            .is_empty()
    );
    let group = AlertFilter {
        group_id: Some(g1),
        ..Default::default()
    };
    assert_eq!(ids(list(group).await), [id1, id2]);
    assert_eq!(ids(list(by(|f| f.limit = Some(1))).await), [id3]);
    assert_eq!(ids(list(by(|f| f.limit = Some(-1))).await).len(), 3);

    // Triage.
    st.triage_alert(id1, &triage("acknowledged", Some("known"), None))
        .await
        .unwrap();
    st.triage_alert(id3, &triage("fixed", None, Some("v3")))
        .await
        .unwrap();
    let acked = list(by(|f| f.state = Some("acknowledged".into()))).await;
    assert_eq!(ids(acked.clone()), [id1]);
    assert_eq!(
        (
            acked[0].note.as_deref(),
            acked[0].who.as_deref(),
            acked[0].fixed_by.as_deref()
        ),
        (Some("known"), Some("ana"), None)
    );
    assert!(acked[0].updated_at >= acked[0].created_at);
    let fixed = list(by(|f| f.state = Some("fixed".into()))).await;
    assert_eq!(
        (
            fixed[0].id,
            fixed[0].fixed_by.as_deref(),
            fixed[0].note.as_deref()
        ),
        (id3, Some("v3"), None)
    );
    for (t, id, what) in [
        (triage("closed", None, None), id1, "unknown state"),
        (triage("fixed", None, Some("v9")), id1, "no build labelled"),
        (triage("invalid", None, None), id3 + 1000, "no alert"),
    ] {
        let err = st.triage_alert(id, &t).await.unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err}");
        assert!(err.to_string().contains(what), "{err}");
    }
    assert_eq!(
        list(by(|f| f.state = Some("acknowledged".into()))).await[0]
            .note
            .as_deref(),
        Some("known"),
        "a refused triage changes nothing"
    );

    // Notification: a group notified is notified again when it gets a new alert.
    assert_eq!(st.unnotified_groups().await.unwrap(), [g1, g2]);
    st.mark_group_notified(g1).await.unwrap();
    assert_eq!(st.unnotified_groups().await.unwrap(), [g2]);
    assert_eq!(
        st.insert_alert(&alert(hs3, main, v1, v2, 30.0))
            .await
            .unwrap(),
        Some(g1)
    );
    assert_eq!(st.unnotified_groups().await.unwrap(), [g1, g2]);
    st.mark_group_notified(g1).await.unwrap();
    st.mark_group_notified(g2).await.unwrap();
    assert!(st.unnotified_groups().await.unwrap().is_empty());

    let groups = st.alert_groups(10).await.unwrap();
    let created = |i: usize| groups[i].created_at;
    assert_eq!(
        groups,
        [
            AlertGroup {
                id: g2,
                branch: "main".into(),
                build: "v3".into(),
                created_at: created(0),
                alerts: 1,
                untriaged: 0,
            },
            AlertGroup {
                id: g1,
                branch: "main".into(),
                build: "v2".into(),
                created_at: created(1),
                alerts: 3,
                untriaged: 2,
            },
        ]
    );
    assert!(groups.iter().all(|g| g.created_at > 0));
    assert_eq!(st.alert_groups(1).await.unwrap().len(), 1);
    assert_eq!(st.alert_groups(-1).await.unwrap().len(), 2);
    assert!(st.alert_groups(0).await.unwrap().is_empty());
});

both!(
    many_history_series_are_saved_in_statements_of_many_rows,
    |st| {
        run_of(&st, "v1", "rig-a", "hb", &[1.0, 2.0]).await;
        let b = build_id(&st, "v1").await;
        st.place_build(b, &Placement::main()).await.unwrap();
        let base = st.history_keys(&KeyFilter::default()).await.unwrap()[0].clone();
        // 250 keys, written in statements of many rows, one key twice: a statement may upsert a
        // row once, and the ids come back matched to their keys whatever order RETURNING gives.
        let keys: Vec<HistoryKey> = (0..250)
            .map(|i| HistoryKey {
                metric: format!("f{i:03}.hit"),
                ..base.clone()
            })
            .collect();
        let ps: Vec<Vec<f64>> = (0..251).map(|i| vec![i as f64 / 1000.0]).collect();
        let mut items: Vec<store::SavedSeries<'_>> = keys
            .iter()
            .zip(&ps)
            .map(|(key, p)| store::SavedSeries {
                key,
                direction: "neutral",
                unit: "count",
                tested_p: p,
            })
            .collect();
        items.insert(
            120,
            store::SavedSeries {
                key: &keys[7],
                direction: "neutral",
                unit: "count",
                tested_p: &ps[250],
            },
        );
        let ids = st.save_history_series_many(&items).await.unwrap();
        assert_eq!(ids.len(), 251);
        assert_eq!(ids[120], ids[7], "one row per key");
        let distinct: std::collections::BTreeSet<i64> = ids.iter().copied().collect();
        assert_eq!(distinct.len(), 250);
        // Saved again, every key keeps its id, in the order asked.
        let again = st.save_history_series_many(&items[..10]).await.unwrap();
        assert_eq!(again, ids[..10]);
        // Only the first ids wanted, across statements: those come back; the rest are saved.
        let bumped: Vec<Vec<f64>> = (0..251).map(|i| vec![0.5 + i as f64 / 1000.0]).collect();
        let later: Vec<store::SavedSeries<'_>> = items
            .iter()
            .zip(&bumped)
            .map(|(s, p)| store::SavedSeries { tested_p: p, ..*s })
            .collect();
        let first = st.save_history_series_ids_first(&later, 130).await.unwrap();
        assert_eq!(first, ids[..130]);
        let family = st
            .benchmark_tested_p(base.branch_id, &base.benchmark)
            .await
            .unwrap();
        let stored: std::collections::BTreeMap<i64, Vec<f64>> = family.into_iter().collect();
        assert_eq!(
            stored[&ids[249 + 1]],
            bumped[250],
            "a key past the ids wanted"
        );
        assert_eq!(stored[&ids[7]], bumped[120], "the later row of a key twice");
        for (i, k) in [(0, &keys[0]), (7, &keys[7]), (249, &keys[249])] {
            let one = st
                .save_history_series(k, "neutral", "count", &ps[i])
                .await
                .unwrap();
            assert_eq!(one, ids[if i >= 120 { i + 1 } else { i }]);
        }
    }
);
