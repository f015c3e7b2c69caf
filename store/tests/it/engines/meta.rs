//! What the server keeps beside results: upload tokens and their scopes, shared comparisons and
//! upload idempotency keys.

use store::{KeyUse, NewShare, Revoked, StoredShare, StoredToken, TokenScopes};

use super::{hb, meta, run_of, seed001_sweep};

both!(tokens_are_created_listed_revoked_and_found_by_hash, |st| {
    assert!(st.tokens().await.unwrap().is_empty());
    assert!(st.insert_token("rig-1", "h1").await.unwrap());
    assert!(
        !st.insert_token("rig-1", "h2").await.unwrap(),
        "a name is taken once"
    );
    assert!(st.insert_token("rig-2", "h2").await.unwrap());
    assert!(
        st.insert_token("rig-3", "h1").await.is_err(),
        "a hash is unique"
    );

    let tokens = st.tokens().await.unwrap();
    let rows: Vec<_> = tokens
        .iter()
        .map(|t| (t.name.as_str(), t.revoked_at, t.runs))
        .collect();
    assert_eq!(rows, [("rig-1", None, 0), ("rig-2", None, 0)]);
    assert!(tokens[0].id < tokens[1].id);
    assert!(tokens.iter().all(|t| t.created_at > 0));
    let (t1, t2) = (tokens[0].id, tokens[1].id);

    assert_eq!(
        st.token_by_hash("h1").await.unwrap(),
        Some(StoredToken {
            id: t1,
            name: "rig-1".into(),
            hash: "h1".into(),
            revoked_at: None,
            scopes: TokenScopes::default(),
        })
    );
    assert_eq!(st.token_by_hash("H1").await.unwrap(), None);
    assert_eq!(st.token_by_hash("nope").await.unwrap(), None);

    // Runs remember the token that uploaded them.
    let mut m = meta("v1", "hb");
    m.token_id = Some(t1);
    let up = st
        .import_run(&m, &[hb("hb.txt", &[1.0])], None)
        .await
        .unwrap()
        .run_ids[0];
    let local = run_of(&st, "v1", "rig", "hb", &[2.0]).await;
    assert_eq!(
        st.uploader_name(up).await.unwrap().as_deref(),
        Some("rig-1")
    );
    assert_eq!(st.uploader_name(local).await.unwrap(), None);
    assert_eq!(st.uploader_name(up + 1000).await.unwrap(), None);
    assert_eq!(
        st.run(up).await.unwrap().unwrap().uploaded_by.as_deref(),
        Some("rig-1")
    );
    let runs: Vec<i64> = st.tokens().await.unwrap().iter().map(|t| t.runs).collect();
    assert_eq!(runs, [1, 0]);

    assert_eq!(st.revoke_token("rig-1").await.unwrap(), Revoked::Now);
    assert_eq!(st.revoke_token("rig-1").await.unwrap(), Revoked::Already);
    assert_eq!(st.revoke_token("ghost").await.unwrap(), Revoked::NotFound);
    let revoked = st.token_by_hash("h1").await.unwrap().unwrap();
    assert!(revoked.revoked_at.is_some_and(|t| t > 0));
    let tokens = st.tokens().await.unwrap();
    assert_eq!(tokens[0].revoked_at, revoked.revoked_at);
    assert_eq!(tokens[1].revoked_at, None);
    assert_eq!(
        st.token_by_hash("h2").await.unwrap().unwrap().revoked_at,
        None
    );

    // Scopes: none until set, by token name; unknown names and ids have none.
    assert_eq!(st.token_scopes(t2).await.unwrap(), TokenScopes::default());
    let scopes = TokenScopes {
        machines: Some("rig-*".into()),
        builds: Some("v6.[0-9]*".into()),
    };
    assert!(st.set_token_scopes("rig-2", &scopes).await.unwrap());
    assert_eq!(st.token_scopes(t2).await.unwrap(), scopes);
    assert_eq!(
        st.token_by_hash("h2").await.unwrap().unwrap().scopes,
        scopes,
        "the token found by its hash carries its scopes"
    );
    assert_eq!(st.token_scopes(t1).await.unwrap(), TokenScopes::default());
    assert!(!st.set_token_scopes("ghost", &scopes).await.unwrap());
    assert_eq!(
        st.token_scopes(t2 + 1000).await.unwrap(),
        TokenScopes::default()
    );
    let machines_only = TokenScopes {
        machines: Some("rig-2".into()),
        builds: None,
    };
    assert!(st.set_token_scopes("rig-2", &machines_only).await.unwrap());
    assert_eq!(st.token_scopes(t2).await.unwrap(), machines_only);
});

fn share<'a>(id: &'a str, settings: &'a str) -> NewShare<'a> {
    NewShare {
        id,
        base_label: "v6.1",
        head_label: "v6.2",
        settings_json: settings,
        base_runs_json: "[1,2]",
        head_runs_json: "[3]",
    }
}

both!(shares_are_stored_once_and_deduplicated_by_content, |st| {
    assert!(
        st.insert_share(&share("Abc123", "{\"alpha\":0.05}"))
            .await
            .unwrap()
    );
    assert!(
        !st.insert_share(&share("Abc123", "{}")).await.unwrap(),
        "an id is taken once"
    );
    let stored = st.share("Abc123").await.unwrap().unwrap();
    assert_eq!(
        StoredShare {
            created_at: 0,
            ..stored.clone()
        },
        StoredShare {
            settings_json: "{\"alpha\":0.05}".into(),
            base_runs_json: "[1,2]".into(),
            head_runs_json: "[3]".into(),
            created_at: 0,
        }
    );
    assert!(stored.created_at > 0);
    assert_eq!(st.share("abc123").await.unwrap(), None, "ids are exact");
    assert_eq!(st.share("nope").await.unwrap(), None);
    // Shares stored without content hash do not collide on it.
    assert!(st.insert_share(&share("Xyz789", "{}")).await.unwrap());

    assert_eq!(st.share_by_content("H1").await.unwrap(), None);
    assert_eq!(
        st.insert_share_once(&share("def456", "{\"a\":1}"), "H1")
            .await
            .unwrap()
            .as_deref(),
        Some("def456")
    );
    assert_eq!(
        st.share_by_content("H1").await.unwrap().as_deref(),
        Some("def456")
    );
    assert_eq!(
        st.insert_share_once(&share("ghi789", "{\"a\":1}"), "H1")
            .await
            .unwrap()
            .as_deref(),
        Some("def456"),
        "the same content is shared once"
    );
    assert_eq!(st.share("ghi789").await.unwrap(), None);
    assert_eq!(
        st.insert_share_once(&share("Abc123", "{\"b\":2}"), "H2")
            .await
            .unwrap(),
        None,
        "a taken id with new content stores nothing"
    );
    assert_eq!(st.share_by_content("H2").await.unwrap(), None);
    assert_eq!(
        st.share("def456").await.unwrap().unwrap().settings_json,
        "{\"a\":1}"
    );
});

both!(
    idempotency_keys_remember_the_first_run_and_its_content,
    |st| {
        assert!(st.insert_token("rig", "h").await.unwrap());
        assert!(st.insert_token("other", "h2").await.unwrap());
        let tokens = st.tokens().await.unwrap();
        let (t, other) = (tokens[0].id, tokens[1].id);

        let (mut m, file) = seed001_sweep();
        m.token_id = Some(t);
        let sweep = st.import_run(&m, &[file], None).await.unwrap();
        assert_eq!(sweep.run_ids.len(), 4);
        let single = run_of(&st, "v1", "rig", "hb", &[1.0, 2.0]).await;

        assert_eq!(st.idempotent_outcome(t, "k1").await.unwrap(), None);
        st.remember_idempotency_key(t, "k1", sweep.run_ids[2])
            .await
            .unwrap();
        let again = st.idempotent_outcome(t, "k1").await.unwrap().unwrap();
        assert_eq!(again.run_ids, sweep.run_ids, "every run of that import");
        assert!(!again.created);
        assert_eq!((again.series, again.samples), (sweep.series, sweep.samples));
        assert!(again.warnings.is_empty() && again.formats.is_empty());
        assert_eq!(st.idempotent_outcome(t, "K1").await.unwrap(), None);
        assert_eq!(st.idempotent_outcome(other, "k1").await.unwrap(), None);

        // The first use stays.
        st.remember_idempotency_key(t, "k1", single).await.unwrap();
        assert_eq!(
            st.idempotent_outcome(t, "k1")
                .await
                .unwrap()
                .unwrap()
                .run_ids,
            sweep.run_ids
        );
        assert_eq!(
            st.idempotency_key_use(t, "k1").await.unwrap(),
            Some(KeyUse {
                run_id: sweep.run_ids[2],
                content_hash: None
            })
        );

        // Keys bound to content: the same key with other content still finds the first.
        st.remember_idempotency_key_for(t, "k2", single, "sha-a")
            .await
            .unwrap();
        st.remember_idempotency_key_for(t, "k2", sweep.run_ids[0], "sha-b")
            .await
            .unwrap();
        assert_eq!(
            st.idempotency_key_use(t, "k2").await.unwrap(),
            Some(KeyUse {
                run_id: single,
                content_hash: Some("sha-a".into())
            })
        );
        let out = st.idempotent_outcome(t, "k2").await.unwrap().unwrap();
        assert_eq!((out.run_ids, out.series, out.samples), (vec![single], 1, 2));
        st.remember_idempotency_key_for(other, "k2", sweep.run_ids[0], "sha-b")
            .await
            .unwrap();
        assert_eq!(
            st.idempotency_key_use(other, "k2").await.unwrap(),
            Some(KeyUse {
                run_id: sweep.run_ids[0],
                content_hash: Some("sha-b".into())
            }),
            "keys are per token"
        );
        assert_eq!(st.idempotency_key_use(t, "k3").await.unwrap(), None);
    }
);

/// PostgreSQL text cannot hold NUL: a name with one is the input's fault (`Invalid`, which the
/// server answers 400), never a database failure (500).
#[tokio::test]
async fn nul_in_text_is_invalid_input_on_postgresql() {
    let Some(st) = store::testing::pg_store().await else {
        return;
    };
    let err = st.insert_token("rig\0one", "hash").await.unwrap_err();
    assert!(
        matches!(err, store::Error::Invalid(ref m) if m.contains("NUL")),
        "{err:?}"
    );
    assert!(st.tokens().await.unwrap().is_empty(), "nothing stored");
}
