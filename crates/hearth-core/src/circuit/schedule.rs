//! The cpu and MPI backends' schedule replayed without encryption: the
//! predicted wall time of a circuit on P ranks x T threads. Plans are
//! chosen by it ([`cheapest`](super::cheapest), in bootstrap units:
//! [`Circuit::time_on`]), and `hearth-bench` predicts with it (`simulate`,
//! `scale`, `ops` and `programs` on the count backend).
//!
//! The policy is the backends': a bootstrap is ready when the last
//! bootstrap it reads has finished (no level barriers); a free slot takes
//! the earliest ready bootstrap, rank 0's own threads before remote ones
//! (they have no transfer). A remote slot (a worker's thread) adds a
//! fixed latency per bootstrap (the two messages and the polls that find
//! them) and a transfer per ciphertext: the input and each output.
//!
//! Pairs: a classical bootstrap started while half of rank 0's threads
//! or more would idle runs on two of them ([`crate::crypto::bootstrap`]'s
//! paired bootstrap) and takes [`PAIRED_SHARE`] of its time.
//!
//! Cores: where all ranks share one host with fewer cores than slots,
//! every bootstrap takes `slots / cores` times longer, as when all slots
//! are busy and share the cores evenly.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::Circuit;

/// Latency the MPI backend adds to a remote bootstrap: each side polls
/// for the other's message with sleeps of up to 200 us.
pub const POLL_LATENCY_S: f64 = 4e-4;

/// The time of a bootstrap on two threads over its time on one: 0.55-0.65
/// on the 2-core development machine (`hearth-bench pbs`), the key switch
/// and the blind rotation split in halves that wait for each other once
/// per step.
pub const PAIRED_SHARE: f64 = 0.6;

/// A host or a cluster to predict for.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    /// Threads of rank 0, then of each worker rank.
    pub threads: Vec<usize>,
    /// Cores shared by all ranks (one host), or `None`: a core per thread.
    pub cores: Option<usize>,
    /// Seconds per bootstrap (key switch + PBS) on one thread with all
    /// threads busy.
    pub pbs_s: f64,
    /// Seconds per ciphertext moved between rank 0 and a worker.
    pub transfer_s: f64,
    /// Seconds added to each remote bootstrap besides its transfers.
    pub latency_s: f64,
    /// Seconds of a bootstrap on two of rank 0's threads, or `None` where
    /// bootstraps are never paired (multi-bit sets, the GPU).
    pub pair_s: Option<f64>,
}

impl Machine {
    /// One process of `threads` threads, a core each.
    pub fn host(threads: usize, pbs_s: f64) -> Self {
        Machine::uniform(1, threads, pbs_s, 0.0, 0.0)
    }

    /// `ranks` ranks of `threads` threads each, a core per thread.
    pub fn uniform(
        ranks: usize,
        threads: usize,
        pbs_s: f64,
        transfer_s: f64,
        latency_s: f64,
    ) -> Self {
        Machine {
            threads: vec![threads.max(1); ranks.max(1)],
            cores: None,
            pbs_s,
            transfer_s,
            latency_s,
            pair_s: None,
        }
    }

    /// The same machine, pairing bootstraps where the cpu backend would
    /// for `circuit`'s parameter set (at [`PAIRED_SHARE`] of `pbs_s`).
    pub fn pairing_for(mut self, circuit: &Circuit) -> Self {
        if crate::crypto::bootstrap::pairs(circuit.params().params()) {
            self.pair_s = Some(self.pbs_s * PAIRED_SHARE);
        }
        self
    }

    /// All slots: rank 0's threads and every worker's.
    pub fn slots(&self) -> usize {
        self.threads.iter().sum()
    }
}

/// What [`simulate`] predicts.
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    /// Wall time of the run, seconds.
    pub wall_s: f64,
    /// Bootstraps run by worker ranks.
    pub remote: usize,
    /// Busy slot-time over slots x wall: 1.0 when no slot ever idles.
    pub utilisation: f64,
}

/// Replays `circuit`'s bootstraps on `machine` (see the module
/// documentation).
pub fn simulate(circuit: &Circuit, machine: &Machine) -> Prediction {
    let n = circuit.bootstraps().len();
    let local = machine.threads.first().copied().unwrap_or(1).max(1);
    let slots = local + machine.threads.iter().skip(1).sum::<usize>();
    let slowdown = match machine.cores {
        Some(c) if c > 0 && c < slots => slots as f64 / c as f64,
        _ => 1.0,
    };
    let pbs = machine.pbs_s * slowdown;
    let (consumers, mut pending) = circuit.dependencies();
    let mut ready: VecDeque<usize> = (0..n).filter(|&b| pending[b] == 0).collect();
    let (mut free_local, mut free_remote) = (local, slots - local);
    // (finish time in ns, bootstrap, local threads held, remote?)
    let mut running: BinaryHeap<Reverse<(u64, usize, usize, bool)>> = BinaryHeap::new();
    let (mut now, mut busy, mut remote) = (0u64, 0f64, 0usize);
    let ns = |s: f64| (s * 1e9).round() as u64;
    loop {
        while let Some(&b) = ready.front() {
            // The backend's rule: a bootstrap gets `local / active`
            // threads, active counting those running and ready.
            let active = running.len() + ready.len();
            let pair = machine
                .pair_s
                .filter(|_| local / active >= 2 && free_local >= 2);
            let (is_remote, held) = if pair.is_some() {
                free_local -= 2;
                (false, 2)
            } else if free_local > 0 {
                free_local -= 1;
                (false, 1)
            } else if free_remote > 0 {
                free_remote -= 1;
                (true, 0)
            } else {
                break;
            };
            ready.pop_front();
            let mut t = pair.map_or(pbs, |p| p * slowdown);
            if is_remote {
                let outs = circuit.bootstraps()[b].offsets.len() as f64;
                t += machine.latency_s + machine.transfer_s * (1.0 + outs);
                remote += 1;
            }
            busy += t * held.max(1) as f64;
            running.push(Reverse((now + ns(t), b, held, is_remote)));
        }
        let Some(Reverse((t, b, held, is_remote))) = running.pop() else {
            break;
        };
        now = t;
        if is_remote {
            free_remote += 1;
        } else {
            free_local += held;
        }
        for &c in &consumers[b] {
            let c = c as usize;
            pending[c] -= 1;
            if pending[c] == 0 {
                ready.push_back(c);
            }
        }
    }
    let wall_s = now as f64 / 1e9;
    Prediction {
        wall_s,
        remote,
        utilisation: if wall_s > 0.0 {
            busy / (slots as f64 * wall_s)
        } else {
            1.0
        },
    }
}

impl Circuit {
    /// The predicted wall time on one host of `threads` threads, in
    /// hundredths of one bootstrap on one thread: what plans are chosen
    /// by. Bootstraps paired where the backend pairs them; without pairs
    /// it lies between 100 x the depth and 100 x (`#PBS / threads` +
    /// depth); 0 for a circuit without bootstraps.
    pub fn time_on(&self, threads: usize) -> u64 {
        let machine = Machine::host(threads, 1.0).pairing_for(self);
        (simulate(self, &machine).wall_s * 100.0).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::circuits::random_circuit;
    use crate::INSECURE_TEST_DIGITS;

    fn chain_and_fan() -> Circuit {
        random_circuit(&INSECURE_TEST_DIGITS, 5, 4, 400, 6)
            .unwrap()
            .circuit
    }

    /// One slot runs every bootstrap in turn.
    #[test]
    fn one_slot_runs_every_bootstrap_in_turn() {
        let c = chain_and_fan();
        let p = simulate(&c, &Machine::host(1, 0.01));
        assert!((p.wall_s - 0.01 * c.bootstraps().len() as f64).abs() < 1e-6);
        assert_eq!(p.remote, 0);
        assert_eq!(c.time_on(1), 100 * c.bootstraps().len() as u64);
    }

    /// Greedy list scheduling lies between the depth and work bounds and
    /// within work + critical path; workers take bootstraps only when
    /// rank 0's threads are full.
    #[test]
    fn wall_is_between_the_depth_and_the_work_bounds() {
        let c = chain_and_fan();
        let st = c.stats();
        for (ranks, threads) in [(1, 2), (2, 1), (4, 4), (64, 16)] {
            let m = Machine::uniform(ranks, threads, 0.01, 1e-5, 1e-4);
            let p = simulate(&c, &m);
            let work = 0.01 * st.pbs as f64 / m.slots() as f64;
            let depth = 0.01 * st.depth as f64;
            assert!(
                p.wall_s + 1e-9 >= work.max(depth),
                "{ranks}x{threads}: {p:?}"
            );
            let slowest = 0.01 + 1e-4 + 1e-5 * 17.0;
            assert!(
                p.wall_s <= work + slowest * st.depth as f64 + 1e-9,
                "{ranks}x{threads}: {p:?}"
            );
            if ranks == 1 {
                assert_eq!(p.remote, 0);
            } else if st.max_width() > threads {
                assert!(p.remote > 0, "{ranks}x{threads}: {p:?}");
            }
        }
        for t in [1, 2, 3, 16, 64, 1000] {
            // Pairs shorten the chains, down to PAIRED_SHARE of the depth.
            let units = c.time_on(t) as f64 / 100.0;
            let levels = st.levels_on(t) as f64;
            assert!(units >= levels * PAIRED_SHARE, "{t} threads: {units}");
            assert!(units <= (st.pbs / t + st.depth as usize + 1) as f64);
            let unpaired = simulate(&c, &Machine::host(t, 1.0)).wall_s;
            assert!(
                units <= unpaired + 1e-9,
                "{t} threads: {units} > {unpaired}"
            );
        }
    }

    /// Oversubscribed cores slow every bootstrap evenly.
    #[test]
    fn oversubscribed_cores_slow_every_bootstrap() {
        let c = chain_and_fan();
        let mut m = Machine::uniform(4, 1, 0.01, 0.0, 0.0);
        let free = simulate(&c, &m).wall_s;
        m.cores = Some(2);
        assert!((simulate(&c, &m).wall_s - 2.0 * free).abs() < 1e-6);
    }

    /// Where levels are uneven, the schedule sees what the level bound
    /// misses: a chain of 4 bootstraps beside 4 independent ones. On 2
    /// threads the bound says 4; the earliest-ready policy runs the
    /// chain's head with one other, then the 3 others before the chain's
    /// second (ready later), so 5 without pairs. With pairs: finishes at
    /// one moment are taken one at a time, lowest bootstrap first, so the
    /// chain's third starts alone beside the last independent one, and
    /// only its fourth runs paired (4 + 0.6); on 8 threads its second
    /// starts while the four others are still running, its last two run
    /// paired (2 + 2 x 0.6).
    #[test]
    fn a_chain_beside_a_level_on_two_threads() {
        use crate::circuit::CircuitBuilder;
        use crate::crypto::lut::Lut;
        let mut b = CircuitBuilder::new(&INSECURE_TEST_DIGITS);
        let x = b.input(0, 3).unwrap();
        let id = Lut::negacyclic(5, |v| v).unwrap();
        let mut chain = x;
        for _ in 0..4 {
            chain = b.bootstrap(chain, &id).unwrap();
        }
        b.output(chain).unwrap();
        for k in 0..4 {
            let y = b.add_const(x, k + 1).unwrap();
            let z = b.bootstrap(y, &id).unwrap();
            b.output(z).unwrap();
        }
        let c = b.build();
        assert_eq!(c.stats().levels_on(2), 4);
        assert_eq!(c.time_on(1), 800);
        let unpaired = |t| simulate(&c, &Machine::host(t, 1.0)).wall_s;
        assert_eq!((unpaired(2), unpaired(8)), (5.0, 4.0));
        assert!(crate::crypto::bootstrap::pairs(&INSECURE_TEST_DIGITS));
        assert_eq!(c.time_on(2), 460);
        assert_eq!(c.time_on(8), 320);
        assert_eq!(
            Circuit::one_level(&INSECURE_TEST_DIGITS, 1, vec![], vec![]).time_on(4),
            0
        );
    }
}
