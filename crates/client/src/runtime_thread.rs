//! A thread with a tokio runtime of its own.

/// Starts a thread named `name` with a current-thread runtime of its own (IO and timers
/// enabled) and runs `body` there with it; returns the runtime's handle once it is built, or
/// why the thread or the runtime could not start. For tasks that must stay off the caller's
/// runtime: a database connection's driver that outlives any one caller, a gateway worker
/// whose requests wake no other thread. The runtime is built on the new thread, so a failure
/// never drops one in the caller's (possibly async) context; the caller waits only for that.
pub fn spawn_runtime_thread<F>(name: String, body: F) -> std::io::Result<tokio::runtime::Handle>
where
    F: FnOnce(tokio::runtime::Runtime) + Send + 'static,
{
    let (built, handle) = std::sync::mpsc::sync_channel(1);
    std::thread::Builder::new().name(name).spawn(move || {
        match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => {
                let _ = built.send(Ok(runtime.handle().clone()));
                body(runtime);
            }
            Err(e) => {
                let _ = built.send(Err(e));
            }
        }
    })?;
    handle
        .recv()
        .map_err(|_| std::io::Error::other("the thread ended before its runtime was built"))?
}
