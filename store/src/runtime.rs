//! Runtimes that live on a thread of their own, for work kept off the callers' runtime.

/// Drives `rt` on a thread of its own named `name`, for as long as the process lives, and
/// returns the handle that spawns onto it (the group writer's runtime, the server's history
/// passes'). Panics when the thread cannot be started.
pub fn runtime_thread(name: &str, rt: tokio::runtime::Runtime) -> tokio::runtime::Handle {
    let handle = rt.handle().clone();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || rt.block_on(std::future::pending::<()>()))
        .unwrap_or_else(|e| panic!("cannot start the thread {name}: {e}"));
    handle
}
