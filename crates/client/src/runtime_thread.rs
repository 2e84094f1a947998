//! A thread with a tokio runtime of its own.

/// Starts a thread named `name` and runs `body` on it with a current-thread runtime of its own
/// (IO and timers enabled), or with why none could be built. For tasks that must stay off the
/// caller's runtime: a database connection's driver that outlives any one caller, a gateway
/// worker whose requests wake no other thread. `Err`: the thread did not start.
pub fn spawn_runtime_thread<F>(name: String, body: F) -> std::io::Result<()>
where
    F: FnOnce(Result<tokio::runtime::Runtime, String>) + Send + 'static,
{
    std::thread::Builder::new().name(name).spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string());
        body(runtime);
    })?;
    Ok(())
}
