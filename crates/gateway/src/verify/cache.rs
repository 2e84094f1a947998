//! The edge's cache of what the authority says about each access key (EDGE-NOTES §9, after S3
//! on Outposts): requests are verified from memory, and the authority is asked at most once per
//! key at a time, in the background while the entry is still good.
//!
//! - Fresh (younger than the soft TTL, jittered per entry so a fleet does not refresh in step):
//!   served.
//! - Stale (soft to hard TTL): served at once, and one background refresh starts.
//! - Past the hard TTL, or never fetched: the request waits for a fetch; every other request for
//!   the key waits for the same one (single flight). If it fails, the request is refused (fail
//!   closed), unless the optional disconnected budget still covers the entry.
//! - Unknown keys are remembered for the negative TTL.
//! - [`Cache::invalidate`] (the authority's change stream) drops an entry at once and fetches
//!   it again in the background: a disabled key is refused from the next request on.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::keys::Key;
use crate::metrics::Metrics;

/// What the authority said of a key: known (and enabled), or unknown.
pub(crate) type Lookup = Option<Arc<Key>>;
/// A fetch's outcome: the lookup, or why the authority could not be asked.
pub(crate) type Fetched = Result<Lookup, String>;
/// A fetch in progress.
pub(crate) type Fetching = Pin<Box<dyn Future<Output = Fetched> + Send>>;

/// Asks the authority about one key.
pub(crate) trait Fetch: Send + Sync + 'static {
    /// What the authority says of `access_key_id` now.
    fn fetch(&self, access_key_id: &str) -> Fetching;
}

/// The cache's times.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CacheTimes {
    /// Entries younger than this are served without asking (before jitter).
    pub(crate) soft: Duration,
    /// Entries older than this are not served (unless `disconnected` covers them).
    pub(crate) hard: Duration,
    /// How long an unknown key stays unknown without asking again.
    pub(crate) negative: Duration,
    /// How long past `hard` an entry may still be served while the authority cannot be
    /// reached; zero (the default) is off.
    pub(crate) disconnected: Duration,
}

/// Entries kept at most; past it, unknown keys and expired entries are dropped first.
const MAX_ENTRIES: usize = 100_000;
/// After a failed background refresh, the next one is tried this much later.
const RETRY_AFTER: Duration = Duration::from_secs(1);

struct Entry {
    lookup: Lookup,
    /// When the fetch that produced it started (its age is counted from there).
    fetched: Instant,
    /// When a hit starts a background refresh: the soft TTL, jittered.
    refresh_at: Instant,
}

#[derive(Default)]
struct Slot {
    entry: Option<Entry>,
    flight: Option<watch::Receiver<Option<Fetched>>>,
    /// Raised by invalidation: a fetch started before it does not store its answer.
    generation: u64,
}

/// The cache; one per edge, shared by every request.
pub(crate) struct Cache {
    fetcher: Arc<dyn Fetch>,
    times: CacheTimes,
    slots: Mutex<HashMap<String, Slot>>,
    metrics: Arc<Metrics>,
    fetches: AtomicU64,
    /// Where fetches run: the runtime that made the cache (the gateway's main one), so one
    /// thread drives the authority's connection whichever worker asked, and it outlives them.
    runtime: tokio::runtime::Handle,
}

impl Cache {
    /// Must be called on a tokio runtime: the one fetches run on.
    pub(crate) fn new(fetcher: Arc<dyn Fetch>, times: CacheTimes, metrics: Arc<Metrics>) -> Self {
        Self {
            runtime: tokio::runtime::Handle::current(),
            fetcher,
            times,
            slots: Mutex::new(HashMap::new()),
            metrics,
            fetches: AtomicU64::new(0),
        }
    }

    fn slots(&self) -> MutexGuard<'_, HashMap<String, Slot>> {
        match self.slots.lock() {
            Ok(s) => s,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Fetches started so far (tests: single flight).
    #[cfg(test)]
    pub(crate) fn fetches(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }

    /// The key's entry: from memory when it is good, else after the (shared) fetch. `Err`: the
    /// authority could not be asked and nothing usable is held.
    pub(crate) async fn get(self: &Arc<Self>, access_key_id: &str) -> Fetched {
        let now = Instant::now();
        let mut flight = {
            let mut slots = self.slots();
            // A hit (the usual case) looks the id up without allocating it.
            if let Some(slot) = slots.get_mut(access_key_id) {
                if let Some(served) = self.serve(slot, access_key_id, now) {
                    return Ok(served);
                }
            }
            let slot = slots.entry(access_key_id.to_owned()).or_default();
            self.metrics.key_misses.inc();
            match &slot.flight {
                Some(rx) => {
                    self.metrics.key_waiters.inc();
                    rx.clone()
                }
                None => self.start(slot, access_key_id),
            }
        };
        let outcome = match flight.wait_for(Option::is_some).await {
            Ok(done) => done.clone().unwrap_or_else(|| Err("no answer".into())),
            Err(_) => Err("the fetch was dropped".into()),
        };
        match outcome {
            Ok(lookup) => Ok(lookup),
            Err(e) => self.disconnected(access_key_id, now).ok_or(e),
        }
    }

    /// What a request is served from memory, if anything; starts a background refresh when
    /// the entry is stale.
    fn serve(
        self: &Arc<Self>,
        slot: &mut Slot,
        access_key_id: &str,
        now: Instant,
    ) -> Option<Lookup> {
        let entry = slot.entry.as_ref()?;
        let age = now.saturating_duration_since(entry.fetched);
        match &entry.lookup {
            None if age < self.times.negative => {
                self.metrics.key_negative_hits.inc();
                Some(None)
            }
            None => None,
            Some(key) if age < self.times.hard => {
                let key = Arc::clone(key);
                if now >= entry.refresh_at {
                    self.metrics.key_stale_served.inc();
                    if slot.flight.is_none() {
                        self.start(slot, access_key_id);
                    }
                } else {
                    self.metrics.key_hits.inc();
                }
                self.metrics.key_age.observe(age.as_secs_f64());
                Some(Some(key))
            }
            // Past the hard TTL after a failed fetch (which pushed `refresh_at` ahead): within
            // the disconnected budget, served without waiting on the authority again.
            Some(key)
                if now < entry.refresh_at && age < self.times.hard + self.times.disconnected =>
            {
                self.metrics.key_disconnected_served.inc();
                self.metrics.key_age.observe(age.as_secs_f64());
                Some(Some(Arc::clone(key)))
            }
            Some(_) => None,
        }
    }

    /// With the authority unreachable: the held entry if the disconnected budget covers it.
    fn disconnected(&self, access_key_id: &str, now: Instant) -> Option<Lookup> {
        if self.times.disconnected.is_zero() {
            return None;
        }
        let slots = self.slots();
        let entry = slots.get(access_key_id)?.entry.as_ref()?;
        let key = entry.lookup.as_ref()?;
        let age = now.saturating_duration_since(entry.fetched);
        (age < self.times.hard + self.times.disconnected).then(|| {
            self.metrics.key_disconnected_served.inc();
            self.metrics.key_age.observe(age.as_secs_f64());
            Some(Arc::clone(key))
        })
    }

    /// Starts the one fetch of `access_key_id`; its answer is stored unless the key was
    /// invalidated meanwhile, and handed to every waiter.
    fn start(
        self: &Arc<Self>,
        slot: &mut Slot,
        access_key_id: &str,
    ) -> watch::Receiver<Option<Fetched>> {
        let (tx, rx) = watch::channel(None);
        slot.flight = Some(rx.clone());
        let generation = slot.generation;
        let this = Arc::clone(self);
        let id = access_key_id.to_owned();
        self.fetches.fetch_add(1, Ordering::Relaxed);
        self.runtime.spawn(async move {
            let started = Instant::now();
            let outcome = this.fetcher.fetch(&id).await;
            this.metrics
                .key_refresh
                .observe(started.elapsed().as_secs_f64());
            if outcome.is_err() {
                this.metrics.key_fetch_failures.inc();
            }
            this.store(&id, generation, started, &outcome);
            // Nobody waiting is fine: a background refresh.
            let _ = tx.send(Some(outcome));
        });
        rx
    }

    fn store(&self, access_key_id: &str, generation: u64, started: Instant, outcome: &Fetched) {
        let mut slots = self.slots();
        if slots.len() > MAX_ENTRIES {
            self.shed(&mut slots);
        }
        let Some(slot) = slots.get_mut(access_key_id) else {
            return;
        };
        slot.flight = None;
        if slot.generation != generation {
            return;
        }
        match outcome {
            Ok(lookup) => {
                slot.entry = Some(Entry {
                    lookup: lookup.clone(),
                    fetched: started,
                    refresh_at: started + jittered(self.times.soft, self.times.hard),
                });
            }
            Err(_) => {
                if let Some(entry) = &mut slot.entry {
                    entry.refresh_at = Instant::now() + RETRY_AFTER;
                }
            }
        }
    }

    /// Drops unknown keys and entries past use, then anything not being fetched.
    fn shed(&self, slots: &mut HashMap<String, Slot>) {
        let now = Instant::now();
        let keep = self.times.hard + self.times.disconnected;
        slots.retain(|_, s| {
            s.flight.is_some()
                || s.entry.as_ref().is_some_and(|e| {
                    e.lookup.is_some() && now.saturating_duration_since(e.fetched) < keep
                })
        });
        if slots.len() > MAX_ENTRIES {
            slots.retain(|_, s| s.flight.is_some());
        }
    }

    /// Drops what is held for these keys (the authority changed them); the ones that were
    /// known are fetched again in the background.
    pub(crate) fn invalidate<'a>(
        self: &Arc<Self>,
        access_key_ids: impl IntoIterator<Item = &'a str>,
    ) {
        let mut slots = self.slots();
        for id in access_key_ids {
            if let Some(slot) = slots.get_mut(id) {
                self.drop_entry(slot, id);
            }
        }
    }

    /// Drops everything held (a gap in the change stream): known keys are fetched again.
    pub(crate) fn invalidate_all(self: &Arc<Self>) {
        let mut slots = self.slots();
        let ids: Vec<String> = slots.keys().cloned().collect();
        for id in ids {
            if let Some(slot) = slots.get_mut(&id) {
                self.drop_entry(slot, &id);
            }
        }
    }

    fn drop_entry(self: &Arc<Self>, slot: &mut Slot, id: &str) {
        slot.generation += 1;
        let known = slot.entry.take().is_some_and(|e| e.lookup.is_some());
        // A fetch in flight may predate the change: a new one replaces it for later waiters.
        slot.flight = None;
        if known {
            self.start(slot, id);
        }
    }

    /// Entries held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots().len()
    }
}

/// The soft TTL spread over ±25% (MinIO spreads 10 minutes over 5 to 15), below `hard`.
fn jittered(soft: Duration, hard: Duration) -> Duration {
    let spread = soft.as_secs_f64() * (0.75 + fastrand::f64() * 0.5);
    Duration::from_secs_f64(spread).min(hard)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// An authority in memory: one known key, a switch to make it unreachable, a delay.
    struct Fake {
        known: Arc<Key>,
        down: AtomicBool,
        delay: Duration,
    }

    impl Fetch for Fake {
        fn fetch(&self, access_key_id: &str) -> Fetching {
            let answer = if self.down.load(Ordering::SeqCst) {
                Err("authority down".to_owned())
            } else if access_key_id == "AKIDKNOWN0000000" {
                Ok(Some(Arc::clone(&self.known)))
            } else {
                Ok(None)
            };
            let delay = self.delay;
            Box::pin(async move {
                tokio::time::sleep(delay).await;
                answer
            })
        }
    }

    fn cache(times: CacheTimes, delay: Duration) -> (Arc<Cache>, Arc<Fake>) {
        let key = Key::for_tests("AKIDKNOWN0000000");
        let fake = Arc::new(Fake {
            known: Arc::new(key),
            down: AtomicBool::new(false),
            delay,
        });
        let fetcher: Arc<dyn Fetch> = Arc::clone(&fake) as Arc<dyn Fetch>;
        let cache = Arc::new(Cache::new(fetcher, times, Arc::new(Metrics::new())));
        (cache, fake)
    }

    fn times(soft_ms: u64, hard_ms: u64) -> CacheTimes {
        CacheTimes {
            soft: Duration::from_millis(soft_ms),
            hard: Duration::from_millis(hard_ms),
            negative: Duration::from_millis(200),
            disconnected: Duration::ZERO,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ten_thousand_cold_requests_make_one_fetch() {
        let (cache, _) = cache(times(60_000, 120_000), Duration::from_millis(50));
        let mut tasks = Vec::new();
        for _ in 0..10_000 {
            let c = Arc::clone(&cache);
            tasks.push(tokio::spawn(async move { c.get("AKIDKNOWN0000000").await }));
        }
        for t in tasks {
            assert!(t.await.unwrap().unwrap().is_some());
        }
        assert_eq!(cache.fetches(), 1);
        assert!(
            cache.metrics.key_waiters.get() >= 9_000,
            "most waited on the one fetch"
        );
    }

    #[tokio::test]
    async fn stale_entries_are_served_and_refreshed_once() {
        let (cache, _) = cache(times(100, 10_000), Duration::from_millis(20));
        assert!(cache.get("AKIDKNOWN0000000").await.unwrap().is_some());
        assert_eq!(cache.fetches(), 1);
        assert!(cache.get("AKIDKNOWN0000000").await.unwrap().is_some());
        assert_eq!(cache.fetches(), 1, "fresh: no fetch");
        tokio::time::sleep(Duration::from_millis(200)).await;
        for _ in 0..100 {
            assert!(cache.get("AKIDKNOWN0000000").await.unwrap().is_some());
        }
        assert_eq!(
            cache.fetches(),
            2,
            "stale: one background refresh for 100 requests"
        );
        assert_eq!(
            cache.metrics.key_misses.get(),
            1,
            "no request waited after the first"
        );
    }

    #[tokio::test]
    async fn past_the_hard_ttl_an_unreachable_authority_fails_closed() {
        let (cache, fake) = cache(times(50, 150), Duration::ZERO);
        assert!(cache.get("AKIDKNOWN0000000").await.unwrap().is_some());
        fake.down.store(true, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert!(
            cache.get("AKIDKNOWN0000000").await.unwrap().is_some(),
            "within the hard TTL the entry is served while the refresh fails"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        let err = cache.get("AKIDKNOWN0000000").await.unwrap_err();
        assert!(err.contains("authority down"), "{err}");
        fake.down.store(false, Ordering::SeqCst);
        assert!(cache.get("AKIDKNOWN0000000").await.unwrap().is_some());
    }

    #[tokio::test]
    async fn the_disconnected_budget_serves_past_the_hard_ttl() {
        let mut t = times(50, 100);
        t.disconnected = Duration::from_millis(300);
        let (cache, fake) = cache(t, Duration::ZERO);
        assert!(cache.get("AKIDKNOWN0000000").await.unwrap().is_some());
        fake.down.store(true, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert!(cache.get("AKIDKNOWN0000000").await.unwrap().is_some());
        assert_eq!(cache.metrics.key_disconnected_served.get(), 1);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(cache.get("AKIDKNOWN0000000").await.is_err(), "budget spent");
    }

    #[tokio::test]
    async fn unknown_keys_are_remembered_for_the_negative_ttl() {
        let (cache, _) = cache(times(60_000, 120_000), Duration::ZERO);
        assert!(cache.get("AKIDUNKNOWN00000").await.unwrap().is_none());
        assert!(cache.get("AKIDUNKNOWN00000").await.unwrap().is_none());
        assert_eq!(cache.fetches(), 1);
        assert_eq!(cache.metrics.key_negative_hits.get(), 1);
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(cache.get("AKIDUNKNOWN00000").await.unwrap().is_none());
        assert_eq!(cache.fetches(), 2, "asked again after the negative TTL");
    }

    #[tokio::test]
    async fn invalidation_drops_the_entry_and_fetches_again() {
        let (cache, fake) = cache(times(60_000, 120_000), Duration::from_millis(20));
        assert!(cache.get("AKIDKNOWN0000000").await.unwrap().is_some());
        fake.down.store(true, Ordering::SeqCst);
        cache.invalidate(["AKIDKNOWN0000000"]);
        assert_eq!(cache.fetches(), 2, "refetched at once in the background");
        assert!(
            cache.get("AKIDKNOWN0000000").await.is_err(),
            "nothing held after invalidation: the failed refetch fails closed"
        );
        fake.down.store(false, Ordering::SeqCst);
        assert!(cache.get("AKIDKNOWN0000000").await.unwrap().is_some());
        cache.invalidate_all();
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn jitter_stays_within_a_quarter_and_below_hard() {
        for _ in 0..1000 {
            let j = jittered(Duration::from_secs(300), Duration::from_secs(600));
            assert!(j >= Duration::from_secs(225) && j <= Duration::from_secs(375));
        }
        assert_eq!(
            jittered(Duration::from_secs(300), Duration::from_secs(200)),
            Duration::from_secs(200)
        );
    }
}
