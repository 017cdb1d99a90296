//! What a GPU run needs in device memory, checked against what is free
//! before anything is allocated: tfhe-rs's CUDA code aborts the process on
//! an allocation that fails, so the GPU backend refuses a run that would not
//! fit with [`Error::TooLarge`] instead. Plain arithmetic, so CI tests the
//! refusal without a GPU.

use super::batch::{Packed, Plan};
use crate::crypto::params::ParameterSet;
use crate::error::Error;

/// Device memory kept free beside a run's buffers (CUDA's own allocations,
/// kernels' stacks, fragmentation).
pub const HEADROOM_BYTES: u64 = 256 << 20;

/// A run's device buffers, in bytes, by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceNeeds {
    /// `(buffer, bytes)`.
    pub parts: Vec<(&'static str, u64)>,
}

impl DeviceNeeds {
    /// The buffers of one run of `plan` on `params`: the stored ciphertexts,
    /// the widest launch's inputs and key switches, the index list, the
    /// plan's packed rows and tables, the circuit's `tables` accumulators,
    /// the outputs, and tfhe-rs's bootstrap scratch (`pbs_scratch` bytes, as
    /// its scratch function reports without allocating).
    pub fn of_run(
        params: &ParameterSet,
        plan: &Plan,
        packed: &Packed,
        tables: usize,
        pbs_scratch: u64,
    ) -> DeviceNeeds {
        let big = params.big_lwe_dimension().to_lwe_size().0 as u64 * 8;
        let small = params.lwe_dimension.to_lwe_size().0 as u64 * 8;
        let accumulator =
            (params.glwe_dimension.0 as u64 + 1) * params.polynomial_size.0 as u64 * 8;
        let widest = plan.widest().max(plan.outputs.len()).max(1) as u64;
        let rows = &packed.rows;
        let indexes = 4 * (rows.start.len() + rows.slot.len()) as u64
            + 8 * (rows.weight.len() + rows.constant.len() + packed.table.len()) as u64;
        DeviceNeeds {
            parts: vec![
                ("stored ciphertexts", plan.slots.max(1) as u64 * big),
                ("bootstrap inputs", widest * big),
                ("key-switched inputs", widest * small),
                ("index list", widest * 8),
                ("rows and tables", indexes),
                ("lookup tables", tables as u64 * accumulator),
                ("outputs", plan.outputs.len().max(1) as u64 * big),
                ("bootstrap scratch", pbs_scratch),
            ],
        }
    }

    /// Bytes in all.
    pub fn total(&self) -> u64 {
        self.parts.iter().map(|&(_, b)| b).sum()
    }

    /// `Ok` if the run fits in `free` bytes with [`HEADROOM_BYTES`] to
    /// spare; else [`Error::TooLarge`] naming the largest buffer.
    pub fn check(&self, free: u64) -> Result<(), Error> {
        let total = self.total();
        let limit = free.saturating_sub(HEADROOM_BYTES);
        if total <= limit {
            return Ok(());
        }
        let (name, bytes) = self
            .parts
            .iter()
            .max_by_key(|&&(_, b)| b)
            .copied()
            .unwrap_or(("nothing", 0));
        Err(Error::TooLarge {
            what: format!(
                "the run's GPU memory in bytes (largest part: {name}, {bytes} bytes; \
                 split the work into smaller circuits)"
            ),
            size: total,
            limit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::params::DIGITS_128;
    use hearth_core::testing::circuits::random_circuit;

    #[test]
    fn a_run_that_does_not_fit_is_refused_naming_its_largest_buffer() {
        let rc = random_circuit(&DIGITS_128, 3, 16, 4000, 8).unwrap();
        let plan = Plan::new(&rc.circuit).unwrap();
        let packed = plan.packed();
        let scratch = 3 << 30;
        let needs = DeviceNeeds::of_run(
            &DIGITS_128,
            &plan,
            &packed,
            rc.circuit.tables().len(),
            scratch,
        );
        let big = DIGITS_128.big_lwe_dimension().to_lwe_size().0 as u64 * 8;
        assert_eq!(needs.parts[0].1, plan.slots as u64 * big);
        assert!(needs.total() > scratch + plan.slots as u64 * big);
        // Fits with the headroom to spare, refused one byte below.
        let free = needs.total() + HEADROOM_BYTES;
        needs.check(free).unwrap();
        match needs.check(free - 1) {
            Err(Error::TooLarge { what, size, limit }) => {
                assert_eq!(size, needs.total());
                assert_eq!(limit, needs.total() - 1);
                assert!(what.contains("bootstrap scratch"), "{what}");
            }
            other => panic!("expected TooLarge, got {other:?}"),
        }
        // No free memory at all: refused, no underflow.
        assert!(matches!(
            needs.check(0),
            Err(Error::TooLarge { limit: 0, .. })
        ));
    }
}
