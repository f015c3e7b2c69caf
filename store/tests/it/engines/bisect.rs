//! The record of bisection steps: listed by commit prefix in any case, grouped by bisection.

use store::NewStep;

use super::run_of;

fn step<'a>(commit: &'a str, good_ref: &'a str, verdict: &'a str) -> NewStep<'a> {
    NewStep {
        commit,
        build_label: "bisect-step",
        machine: "rig",
        benchmark: "hb",
        series: "time",
        good_ref,
        bad_ref: "v6.2",
        runs: 3,
        samples: 30,
        median: Some(1.5),
        good_median: Some(1.0),
        bad_median: Some(2.0),
        p_good: Some(0.001),
        p_bad: Some(0.3),
        level: Some(0.05),
        verdict,
        run_id: None,
    }
}

both!(bisect_steps_are_recorded_and_grouped_by_bisection, |st| {
    assert!(st.bisect_steps(None).await.unwrap().is_empty());
    let run = run_of(&st, "bisect-step", "rig", "hb", &[1.5]).await;
    let s1 = st
        .insert_bisect_step(&NewStep {
            run_id: Some(run),
            ..step("abcdef1234", "v6.1", "bad")
        })
        .await
        .unwrap();
    let s2 = st
        .insert_bisect_step(&NewStep {
            median: None,
            good_median: None,
            bad_median: None,
            p_good: None,
            p_bad: None,
            level: None,
            ..step("ABCDEF9999", "v6.1", "good")
        })
        .await
        .unwrap();
    let s3 = st
        .insert_bisect_step(&step("1234567abc", "v5.0", "skip"))
        .await
        .unwrap();
    assert!(s1 < s2 && s2 < s3);

    let all = st.bisect_steps(None).await.unwrap();
    assert_eq!(all.iter().map(|s| s.id).collect::<Vec<_>>(), [s1, s2, s3]);
    let first = &all[0];
    assert!(first.created_at > 0);
    assert_eq!(
        (
            first.commit.as_str(),
            first.build_label.as_str(),
            first.machine.as_str(),
            first.benchmark.as_str(),
            first.series.as_str(),
            first.good_ref.as_str(),
            first.bad_ref.as_str(),
            first.runs,
            first.verdict.as_str(),
            first.run_id
        ),
        (
            "abcdef1234",
            "bisect-step",
            "rig",
            "hb",
            "time",
            "v6.1",
            "v6.2",
            3,
            "bad",
            Some(run)
        )
    );
    assert_eq!(
        (
            first.median,
            first.good_median,
            first.bad_median,
            first.p_good,
            first.p_bad
        ),
        (Some(1.5), Some(1.0), Some(2.0), Some(0.001), Some(0.3))
    );
    let second = &all[1];
    assert_eq!(
        (
            second.median,
            second.p_bad,
            second.run_id,
            second.verdict.as_str()
        ),
        (None, None, None, "good")
    );

    let at = async |c: &str| {
        st.bisect_steps(Some(c))
            .await
            .unwrap()
            .iter()
            .map(|s| s.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(at("abcdef").await, [s1, s2], "commit prefixes in any case");
    assert_eq!(at("ABCDEF9").await, [s2]);
    assert_eq!(at("1234").await, [s3]);
    assert_eq!(at("").await, [s1, s2, s3]);
    assert!(at("ffff").await.is_empty());
    assert!(at("bcdef").await.is_empty(), "a prefix, not a substring");

    let ids = |v: Vec<store::StepRow>| v.iter().map(|s| s.id).collect::<Vec<_>>();
    assert_eq!(ids(st.bisection_of(s2).await.unwrap()), [s1, s2]);
    assert_eq!(ids(st.bisection_of(s1).await.unwrap()), [s1, s2]);
    assert_eq!(ids(st.bisection_of(s3).await.unwrap()), [s3]);
    assert!(st.bisection_of(s3 + 1000).await.unwrap().is_empty());
});

both!(a_value_that_is_not_a_number_is_stored_as_none, |st| {
    let id = st
        .insert_bisect_step(&NewStep {
            median: Some(f64::NAN),
            p_good: Some(f64::INFINITY),
            p_bad: Some(f64::NEG_INFINITY),
            ..step("abc1234", "v6.1", "bad")
        })
        .await
        .unwrap();
    let rows = st.bisection_of(id).await.unwrap();
    assert_eq!(
        (rows[0].median, rows[0].p_good, rows[0].p_bad),
        (None, Some(f64::INFINITY), Some(f64::NEG_INFINITY)),
        "SQLite stores NaN as NULL; PostgreSQL is given NULL"
    );
});
