//! What a GPU's circuits are planned for. On a CPU a circuit's time is
//! its schedule on the threads ([`Circuit::time_on`](super::Circuit::time_on)).
//! On a GPU a level costs one launch's latency however narrow it is, and
//! a wide one its bootstraps over the device's throughput: the roofline
//! `max(depth x latency, #PBS / throughput)`. A schedule on latency x
//! throughput threads (the bootstraps a level holds before its width,
//! not its latency, sets its time) is that roofline in units of the
//! latency, within a level's rounding: so GPU circuits are planned, by
//! [`cheapest`](super::cheapest) and every algorithm's own choice, for
//! [`GpuCost::plan_threads`] threads.

use crate::crypto::params::{ParameterSet, ParamsId};

/// A GPU's cost of one level and its throughput, for one parameter set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuCost {
    /// Seconds of one level however narrow: the latency of a launch of
    /// one bootstrap (key switch included).
    pub level_s: f64,
    /// Bootstraps per second of the widest launches.
    pub pbs_per_s: f64,
}

impl GpuCost {
    /// The figures for `params` on one H100. Classical sets: hearth's own
    /// measurements (`docs/results/gpu-h100/pbs-*.md`: batch 1 and the best
    /// batch, inputs and outputs moved included). The multi-bit
    /// `DIGITS_MB4_128`: tfhe-rs's published latency of its KS-PBS on this
    /// set (0.973 ms) and the throughput hearth aims at (40 000 PBS/s),
    /// until `scripts/gpu-measure.sh pbs` measures them. Sets that do not
    /// run on the GPU get `DIGITS_128`'s.
    pub fn of(params: &ParameterSet) -> GpuCost {
        let (level_s, pbs_per_s) = match params.id {
            ParamsId::Gates128 | ParamsId::Bits128 | ParamsId::InsecureTestBits => {
                (7.12e-3, 16_590.0)
            }
            ParamsId::Digits128Mb4 => (0.973e-3, 40_000.0),
            _ => (4.97e-3, 19_046.0),
        };
        GpuCost { level_s, pbs_per_s }
    }

    /// The thread count whose plans suit this GPU: latency x throughput,
    /// the bootstraps one level holds at the cost of one (95 for
    /// `DIGITS_128`, 39 for `DIGITS_MB4_128`).
    pub fn plan_threads(&self) -> usize {
        ((self.level_s * self.pbs_per_s).round() as usize).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::params::{DIGITS_128, DIGITS_MB4_128, GATES_128};

    /// The plan's thread count is latency x throughput, at least one.
    #[test]
    fn plan_width_is_latency_times_throughput() {
        assert_eq!(GpuCost::of(&DIGITS_128).plan_threads(), 95);
        assert_eq!(GpuCost::of(&DIGITS_MB4_128).plan_threads(), 39);
        assert_eq!(GpuCost::of(&GATES_128).plan_threads(), 118);
        let one = GpuCost {
            level_s: 1e-9,
            pbs_per_s: 1.0,
        };
        assert_eq!(one.plan_threads(), 1, "never below one thread");
    }
}
