//! The order queued jobs start in: the lane served least recently first.
//!
//! A lane is a tenant, or on an open server (no tenants) a key id. The
//! next job to start is the oldest of the lane whose last job started
//! longest ago (a lane never served, or not since every waiting lane was,
//! first of all; ties in the order the lanes began to wait). Lanes that
//! keep jobs queued are therefore served in turn, one job each, and a
//! lane that arrives with a single job waits for no queued job of the
//! others, only for room beside the jobs already running: one client's
//! long queue cannot hold back another's job. Within a lane jobs start in
//! submission order.

use std::collections::{HashMap, VecDeque};

use crate::wire::JobId;

/// Whose turn a job waits for: its tenant, or its key id when the job has
/// no tenant (an open server).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Lane {
    tenant: String,
    key: String,
}

impl Lane {
    pub(crate) fn new(tenant: &str, key_id: &str) -> Lane {
        Lane {
            tenant: tenant.to_string(),
            key: if tenant.is_empty() {
                key_id.to_string()
            } else {
                String::new()
            },
        }
    }
}

/// One lane's queued jobs.
struct Waiting {
    jobs: VecDeque<JobId>,
    /// When the lane began to wait (a count of pushes), for ties.
    since: u64,
}

/// Queued jobs by lane.
#[derive(Default)]
pub(crate) struct FairQueue {
    lanes: HashMap<Lane, Waiting>,
    /// When each lane last had a job start (a count of starts). A lane
    /// missing here counts as 0: never served, or not since every lane
    /// waiting now was.
    served: HashMap<Lane, u64>,
    starts: u64,
    pushes: u64,
    len: usize,
}

impl FairQueue {
    /// Queues `id` at the end of `lane`.
    pub(crate) fn push(&mut self, lane: Lane, id: JobId) {
        self.pushes += 1;
        let since = self.pushes;
        self.lanes
            .entry(lane)
            .or_insert_with(|| Waiting {
                jobs: VecDeque::new(),
                since,
            })
            .jobs
            .push_back(id);
        self.len += 1;
    }

    /// The lane whose job starts next, under `served`.
    fn next_lane<'a>(
        &'a self,
        served: &HashMap<Lane, u64>,
        skip: &dyn Fn(&Lane) -> bool,
    ) -> Option<&'a Lane> {
        self.lanes
            .iter()
            .filter(|(l, _)| !skip(l))
            .min_by_key(|(l, w)| (served.get(*l).copied().unwrap_or(0), w.since))
            .map(|(l, _)| l)
    }

    /// The job that starts next.
    pub(crate) fn peek(&self) -> Option<JobId> {
        let lane = self.next_lane(&self.served, &|_| false)?;
        self.lanes[lane].jobs.front().copied()
    }

    /// Takes the job that starts next.
    pub(crate) fn pop(&mut self) -> Option<JobId> {
        let lane = self.next_lane(&self.served, &|_| false)?.clone();
        let waiting = self.lanes.get_mut(&lane).expect("found");
        let id = waiting.jobs.pop_front().expect("lanes have jobs");
        if waiting.jobs.is_empty() {
            self.lanes.remove(&lane);
        }
        self.starts += 1;
        self.served.insert(lane, self.starts);
        self.len -= 1;
        self.forget_old_turns();
        Some(id)
    }

    /// Drops the turns of lanes with nothing queued that were served no
    /// later than every waiting lane: they would go first anyway, as a
    /// lane never served does. This keeps `served` about as small as the
    /// lanes in play (at most one entry per tenant or key id).
    fn forget_old_turns(&mut self) {
        let Some(floor) = self
            .lanes
            .keys()
            .map(|l| self.served.get(l).copied().unwrap_or(0))
            .min()
        else {
            // Nothing waits: the turns decide who goes first next time.
            return;
        };
        let lanes = &self.lanes;
        self.served
            .retain(|l, at| lanes.contains_key(l) || *at > floor);
    }

    /// Takes `id` out of the queue wherever it is; false if it is not
    /// queued.
    pub(crate) fn remove(&mut self, id: JobId) -> bool {
        let Some((lane, i)) = self
            .lanes
            .iter()
            .find_map(|(l, w)| w.jobs.iter().position(|j| *j == id).map(|i| (l.clone(), i)))
        else {
            return false;
        };
        let waiting = self.lanes.get_mut(&lane).expect("found");
        waiting.jobs.remove(i);
        if waiting.jobs.is_empty() {
            self.lanes.remove(&lane);
        }
        self.len -= 1;
        true
    }

    /// How many queued jobs start before `id` if nothing else is
    /// submitted (the order [`FairQueue::pop`] would take them in),
    /// counting only those of `id`'s own tenant: a tenant learns nothing
    /// of the others' load. (On an open server every lane is the one
    /// anonymous tenant's.)
    pub(crate) fn position(&self, id: JobId) -> Option<usize> {
        let (own, _) = self.lanes.iter().find(|(_, w)| w.jobs.contains(&id))?;
        let mut served = self.served.clone();
        let mut taken: HashMap<&Lane, usize> = HashMap::new();
        let mut starts = self.starts;
        let mut ahead = 0;
        for _ in 0..self.len {
            let done = |l: &Lane| taken.get(l).copied().unwrap_or(0) == self.lanes[l].jobs.len();
            let lane = self.next_lane(&served, &done)?;
            let k = taken.entry(lane).or_default();
            if self.lanes[lane].jobs[*k] == id {
                return Some(ahead);
            }
            if lane.tenant == own.tenant {
                ahead += 1;
            }
            *k += 1;
            starts += 1;
            served.insert(lane.clone(), starts);
        }
        None
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: usize) -> Vec<JobId> {
        (0..n).map(|_| JobId::random()).collect()
    }

    /// Drains the queue, checking `position` against the real order.
    fn drain(q: &mut FairQueue) -> Vec<JobId> {
        let mut queued: Vec<JobId> = q
            .lanes
            .values()
            .flat_map(|w| w.jobs.iter().copied())
            .collect();
        let mut order = Vec::new();
        let positions: HashMap<JobId, usize> = queued
            .iter()
            .map(|&id| (id, q.position(id).unwrap()))
            .collect();
        let tenant_of: HashMap<JobId, String> = q
            .lanes
            .iter()
            .flat_map(|(l, w)| w.jobs.iter().map(|&id| (id, l.tenant.clone())))
            .collect();
        while let Some(id) = q.peek() {
            assert_eq!(q.pop(), Some(id));
            let same = order.iter().filter(|j| tenant_of[*j] == tenant_of[&id]);
            assert_eq!(positions[&id], same.count(), "position of the job");
            order.push(id);
        }
        assert_eq!(q.len(), 0);
        queued.sort();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted, queued);
        order
    }

    #[test]
    fn lanes_waiting_together_take_turns() {
        let mut q = FairQueue::default();
        let (a, b, c) = (Lane::new("a", ""), Lane::new("b", ""), Lane::new("c", ""));
        let many = ids(20);
        for &id in &many {
            q.push(a.clone(), id);
        }
        let bs = ids(3);
        for &id in &bs {
            q.push(b.clone(), id);
        }
        let single = JobId::random();
        q.push(c, single);
        // Its tenant's own jobs before it, none of the others'.
        assert_eq!(q.position(single), Some(0));
        assert_eq!(q.position(bs[2]), Some(2));
        assert_eq!(q.position(many[3]), Some(3));
        assert_eq!(q.len(), 24);
        let order = drain(&mut q);
        assert_eq!(
            order[..7],
            [many[0], bs[0], single, many[1], bs[1], many[2], bs[2]]
        );
        assert_eq!(order[7..], many[3..]);
    }

    #[test]
    fn a_lane_that_arrives_goes_before_lanes_already_served() {
        let mut q = FairQueue::default();
        let (a, b) = (Lane::new("a", ""), Lane::new("b", ""));
        let many = ids(5);
        for &id in &many {
            q.push(a.clone(), id);
        }
        assert_eq!(q.pop(), Some(many[0]), "a's first job starts");
        let single = JobId::random();
        q.push(b.clone(), single);
        assert_eq!(q.position(single), Some(0));
        assert_eq!(q.position(many[1]), Some(0));
        assert_eq!(q.position(many[2]), Some(1));
        assert_eq!(drain(&mut q), [single, many[1], many[2], many[3], many[4]]);
        // a was served last: b's next job goes first, though queued after.
        let (x, y) = (JobId::random(), JobId::random());
        q.push(a, y);
        q.push(b, x);
        assert_eq!(drain(&mut q), [x, y]);
        assert!(q.served.len() <= 2);
    }

    #[test]
    fn lanes_are_key_ids_without_tenants() {
        assert_ne!(Lane::new("", "k1"), Lane::new("", "k2"));
        assert_eq!(Lane::new("t", "k1"), Lane::new("t", "k2"));
        assert_ne!(Lane::new("t", ""), Lane::new("", "t"));
    }

    #[test]
    fn removal_keeps_the_turns_of_the_others() {
        let mut q = FairQueue::default();
        let (a, b) = (Lane::new("a", ""), Lane::new("b", ""));
        let xs = ids(4);
        q.push(a.clone(), xs[0]);
        q.push(b.clone(), xs[1]);
        q.push(a.clone(), xs[2]);
        assert!(q.remove(xs[1]));
        assert!(!q.remove(xs[1]));
        assert!(!q.remove(xs[3]));
        q.push(b, xs[3]);
        assert_eq!(drain(&mut q), [xs[0], xs[3], xs[2]]);
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn random_pushes_and_removals_keep_every_job_once() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..200 {
            let mut q = FairQueue::default();
            let mut live = Vec::new();
            for _ in 0..rng.gen_range(0..40) {
                let id = JobId::random();
                if !live.is_empty() && rng.gen_bool(0.2) {
                    let gone = live.swap_remove(rng.gen_range(0..live.len()));
                    assert!(q.remove(gone));
                }
                q.push(Lane::new(&format!("t{}", rng.gen_range(0..4)), ""), id);
                live.push(id);
            }
            assert_eq!(q.len(), live.len());
            let order = drain(&mut q);
            assert_eq!(order.len(), live.len());
        }
    }
}
