//! A store with connections of its own (`Store::with_own_connections`) works on another
//! runtime while the runtime that opened the store is held up: what the server's history passes
//! rely on, running on a thread and runtime of their own beside the request handlers'. It
//! writes and reads the same database, under the same instance.

use std::time::Duration;

use store::RunQuery;

use super::{hb, meta};

both!(own_connections, |st| {
    let own = st.with_own_connections();
    assert_eq!(own.instance(), st.instance());
    st.import_run(&meta("v1", "hackbench"), &[hb("a.txt", &[1.0, 2.0])], None)
        .await
        .unwrap();

    // The other runtime imports and reads while this test's runtime, which opened the store
    // and its pool's connections, is blocked in a plain channel wait: on PostgreSQL a
    // connection of that pool would wait for this thread to read its socket.
    let (tx, rx) = std::sync::mpsc::channel();
    let other = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            own.import_run(&meta("v2", "hackbench"), &[hb("b.txt", &[3.0, 4.0])], None)
                .await
                .unwrap();
            tx.send(own.runs(&RunQuery::default()).await.unwrap().len())
                .unwrap();
        });
    });
    let seen = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the other runtime's import and read, with this runtime held up");
    other.join().unwrap();
    assert_eq!(seen, 2, "the other runtime sees both runs");
    assert_eq!(st.runs(&RunQuery::default()).await.unwrap().len(), 2);
});
