//! What a run does: which requests, on which keys, in what proportion.

use std::fmt::Write as _;

use crate::request::{Op, OpKind};

/// The workloads of `slipstream bench`.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    /// PUT new objects.
    Put,
    /// GET objects uploaded before the run.
    Get,
    /// HEAD objects uploaded before the run.
    Head,
    /// DELETE objects uploaded before the run, each once.
    Delete,
    /// LIST (one page) a prefix holding the objects uploaded before the run.
    List,
    /// A weighted mix of GET, HEAD, PUT and DELETE.
    Mixed(Mix),
    /// PUT an object, then HEAD it: the Outposts experiment's pair.
    PutHead,
    /// Presign GET URLs: CPU only, no server.
    Presign,
}

impl Workload {
    /// The name used on the command line and in reports.
    pub fn name(&self) -> &'static str {
        match self {
            Workload::Put => "put",
            Workload::Get => "get",
            Workload::Head => "head",
            Workload::Delete => "delete",
            Workload::List => "list",
            Workload::Mixed(_) => "mixed",
            Workload::PutHead => "put-head",
            Workload::Presign => "presign",
        }
    }

    /// Objects to upload before the run: `objects` for reads, one per operation for deletes.
    pub fn fixtures(&self, objects: u64, operations: u64) -> u64 {
        match self {
            Workload::Get | Workload::Head | Workload::List | Workload::Mixed(_) => objects,
            Workload::Delete => operations,
            Workload::Put | Workload::PutHead | Workload::Presign => 0,
        }
    }
}

/// Keys of one run: everything under `slipstream-bench/RUN/`, spread over `prefixes`
/// sub-prefixes (S3 scales request rates per prefix).
#[derive(Clone, Debug)]
pub struct Keys {
    /// `slipstream-bench/RUN/` or the user's `--prefix`, ending in `/`.
    pub root: String,
    /// Sub-prefixes `0/` .. `N-1/`.
    pub prefixes: u64,
}

impl Keys {
    /// The `i`th object uploaded before the run.
    pub fn fixture(&self, i: u64) -> String {
        self.key("obj", i)
    }

    /// The `i`th object written during the run.
    pub fn written(&self, i: u64) -> String {
        self.key("put", i)
    }

    fn key(&self, what: &str, i: u64) -> String {
        let mut k = String::with_capacity(self.root.len() + 24);
        k.push_str(&self.root);
        let _ = write!(k, "{}/{what}-{i}", i % self.prefixes.max(1));
        k
    }
}

/// Weights of the mixed workload, such as `get=45,head=30,put=15,delete=10` (warp's default).
#[derive(Clone, Debug, PartialEq)]
pub struct Mix(Vec<(OpKind, u32)>);

impl Default for Mix {
    fn default() -> Self {
        Mix(vec![
            (OpKind::Get, 45),
            (OpKind::Head, 30),
            (OpKind::Put, 15),
            (OpKind::Delete, 10),
        ])
    }
}

impl Mix {
    /// Parses `kind=weight,...`; kinds are get, head, put and delete.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut out = Vec::new();
        for part in s.split(',').filter(|p| !p.is_empty()) {
            let (name, weight) = part
                .split_once('=')
                .ok_or_else(|| format!("--mix {part:?}: expected KIND=WEIGHT"))?;
            let kind = match name.trim() {
                "get" => OpKind::Get,
                "head" => OpKind::Head,
                "put" => OpKind::Put,
                "delete" => OpKind::Delete,
                other => return Err(format!("--mix: {other:?} is not get, head, put or delete")),
            };
            let weight = weight
                .trim()
                .parse()
                .map_err(|_| format!("--mix {part:?}: the weight is not a whole number"))?;
            out.push((kind, weight));
        }
        if out.iter().map(|(_, w)| u64::from(*w)).sum::<u64>() == 0 {
            return Err("--mix: the weights add up to zero".into());
        }
        Ok(Mix(out))
    }

    /// A kind drawn with the mix's weights.
    pub fn pick(&self, rng: &mut fastrand::Rng) -> OpKind {
        let total: u64 = self.0.iter().map(|(_, w)| u64::from(*w)).sum();
        let mut x = rng.u64(0..total);
        for (kind, w) in &self.0 {
            if x < u64::from(*w) {
                return *kind;
            }
            x -= u64::from(*w);
        }
        OpKind::Get
    }

    /// The weights as written, for reports.
    pub fn describe(&self) -> String {
        self.0
            .iter()
            .map(|(k, w)| format!("{}={w}", k.name()))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Chooses each worker's operations. One per worker: its random numbers and the keys it wrote
/// (which its deletes take back, so a mixed run never reads a key another worker deleted).
pub struct Planner {
    workload: Workload,
    keys: Keys,
    fixtures: u64,
    rng: fastrand::Rng,
    written: Vec<String>,
}

impl Planner {
    /// A planner for one worker; `seed` differs per worker.
    pub fn new(workload: Workload, keys: Keys, fixtures: u64, seed: u64) -> Self {
        Self {
            workload,
            keys,
            fixtures,
            rng: fastrand::Rng::with_seed(seed),
            written: Vec::new(),
        }
    }

    /// The requests of operation number `i` (global over all workers, warm-up included).
    pub fn ops(&mut self, i: u64) -> Vec<Op> {
        let op = |kind, key| Op { kind, key };
        match &self.workload {
            Workload::Put => vec![op(OpKind::Put, self.keys.written(i))],
            Workload::PutHead => {
                let key = self.keys.written(i);
                vec![op(OpKind::Put, key.clone()), op(OpKind::Head, key)]
            }
            Workload::Get | Workload::Head => {
                let kind = if self.workload == Workload::Get {
                    OpKind::Get
                } else {
                    OpKind::Head
                };
                vec![op(kind, self.keys.fixture(i % self.fixtures.max(1)))]
            }
            Workload::Delete => vec![op(OpKind::Delete, self.keys.fixture(i))],
            Workload::List => vec![op(OpKind::List, self.keys.root.clone())],
            Workload::Mixed(mix) => {
                let kind = mix.pick(&mut self.rng);
                match kind {
                    OpKind::Get | OpKind::Head => {
                        let n = self.rng.u64(0..self.fixtures.max(1));
                        vec![op(kind, self.keys.fixture(n))]
                    }
                    OpKind::Delete if !self.written.is_empty() => {
                        let n = self.rng.usize(0..self.written.len());
                        vec![op(OpKind::Delete, self.written.swap_remove(n))]
                    }
                    _ => {
                        let key = self.keys.written(i);
                        self.written.push(key.clone());
                        vec![op(OpKind::Put, key)]
                    }
                }
            }
            Workload::Presign => vec![op(OpKind::Presign, self.keys.fixture(i))],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Keys {
        Keys {
            root: "slipstream-bench/r/".into(),
            prefixes: 4,
        }
    }

    #[test]
    fn keys_spread_over_prefixes() {
        assert_eq!(keys().fixture(0), "slipstream-bench/r/0/obj-0");
        assert_eq!(keys().fixture(7), "slipstream-bench/r/3/obj-7");
        assert_eq!(keys().written(5), "slipstream-bench/r/1/put-5");
    }

    #[test]
    fn mix_parses_and_draws_in_proportion() {
        assert_eq!(
            Mix::parse("get=45,head=30,put=15,delete=10"),
            Ok(Mix::default())
        );
        assert!(Mix::parse("get=0").is_err());
        assert!(Mix::parse("copy=1").is_err());
        assert!(Mix::parse("get").is_err());
        let mix = Mix::parse("get=3,put=1").unwrap_or_default();
        let mut rng = fastrand::Rng::with_seed(1);
        let gets = (0..40_000)
            .filter(|_| mix.pick(&mut rng) == OpKind::Get)
            .count();
        assert!((29_000..31_000).contains(&gets), "{gets}");
    }

    #[test]
    fn mixed_deletes_only_what_the_worker_wrote() {
        let mix = Mix::parse("put=1,delete=1,get=1").unwrap_or_default();
        let mut p = Planner::new(Workload::Mixed(mix), keys(), 10, 3);
        let mut live = std::collections::HashSet::new();
        for i in 0..2000 {
            for op in p.ops(i) {
                match op.kind {
                    OpKind::Put => assert!(live.insert(op.key)),
                    OpKind::Delete => assert!(live.remove(&op.key), "{} never written", op.key),
                    OpKind::Get => assert!(op.key.contains("/obj-")),
                    k => panic!("unexpected {k:?}"),
                }
            }
        }
    }

    #[test]
    fn put_head_pairs_and_fixture_counts() {
        let mut p = Planner::new(Workload::PutHead, keys(), 0, 0);
        let ops = p.ops(9);
        assert_eq!(ops.len(), 2);
        assert_eq!((ops[0].kind, ops[1].kind), (OpKind::Put, OpKind::Head));
        assert_eq!(ops[0].key, ops[1].key);
        assert_eq!(Workload::Delete.fixtures(100, 7), 7);
        assert_eq!(Workload::Get.fixtures(100, 7), 100);
        assert_eq!(Workload::Put.fixtures(100, 7), 0);
    }
}
