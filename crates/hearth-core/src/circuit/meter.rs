//! A bound on the work of building circuits, for builds whose size is
//! not known in advance: a program file rebuilt for a client
//! (`hearth::formats::program_file`).
//!
//! A file states its cost, but only its rebuild shows what it costs, and
//! the work is spent before the comparison: an algorithm's automatic
//! choices build whole candidate circuits on scratch builders
//! ([`super::cheapest`]) before one bootstrap lands in the program. A
//! [`Meter`] set for a build counts what every builder on this thread
//! makes while it runs (scratch builders too): bootstraps, and the bytes
//! of the wires, bootstraps and tables they hold with what their
//! allocations cost, summed over the build (a bound on its peak memory:
//! measured within a few MiB of the rise of the process's peak resident
//! memory). The first bootstrap or byte past its limits,
//! or a step past its deadline, fails with [`BuildError::Stopped`]; so
//! does every step after it, so the build unwinds through the algorithms'
//! own error paths, and no [`super::Memo`] keeps a choice made meanwhile.
//!
//! Outside [`Meter::run`] nothing is counted.

use std::cell::RefCell;
use std::time::Instant;

use crate::error::BuildError;

/// How many steps pass between two looks at the clock.
const CLOCK_EVERY: u64 = 256;

/// The limits of one metered build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meter {
    /// Most bootstraps made, scratch builds included.
    pub bootstraps: u64,
    /// Most bytes allocated for wires, bootstraps, tables and the values
    /// that name them, summed over the build.
    pub bytes: u64,
    /// When the build must have ended.
    pub deadline: Option<Instant>,
}

/// What a metered build made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spent {
    /// Bootstraps made, scratch builds included.
    pub bootstraps: u64,
    /// Bytes allocated, summed.
    pub bytes: u64,
    /// Whether the meter stopped the build.
    pub stopped: bool,
}

/// The meter in force on this thread and what it counted.
struct Active {
    meter: Meter,
    spent: Spent,
    steps: u64,
}

thread_local! {
    static ACTIVE: RefCell<Option<Active>> = const { RefCell::new(None) };
}

/// Puts the meter in force back as it was when dropped (also on unwind).
struct Restore(Option<Active>);

impl Drop for Restore {
    fn drop(&mut self) {
        let outer = self.0.take();
        ACTIVE.with(|a| *a.borrow_mut() = outer);
    }
}

impl Meter {
    /// No limit: counts only.
    pub fn unlimited() -> Meter {
        Meter {
            bootstraps: u64::MAX,
            bytes: u64::MAX,
            deadline: None,
        }
    }

    /// Runs `f` with this meter in force on this thread: `f`'s result,
    /// and what was built while it ran. A meter already in force is put
    /// back afterwards, charged with what this one counted.
    pub fn run<T>(&self, f: impl FnOnce() -> T) -> (T, Spent) {
        let fresh = Active {
            meter: *self,
            spent: Spent::default(),
            steps: 0,
        };
        let outer = ACTIVE.with(|a| a.borrow_mut().replace(fresh));
        let mut restore = Restore(outer);
        let out = f();
        let spent = ACTIVE.with(|a| a.borrow().as_ref().map(|a| a.spent).unwrap_or_default());
        if let Some(outer) = &mut restore.0 {
            outer.spent.bootstraps = outer.spent.bootstraps.saturating_add(spent.bootstraps);
            outer.spent.bytes = outer.spent.bytes.saturating_add(spent.bytes);
        }
        drop(restore);
        (out, spent)
    }
}

/// Counts `bootstraps` and `bytes` against the meter in force, if any:
/// [`BuildError::Stopped`] once over a limit or past the deadline (and
/// for every step after).
pub fn spend(bootstraps: u64, bytes: u64) -> Result<(), BuildError> {
    ACTIVE.with(|a| {
        let mut a = a.borrow_mut();
        let Some(a) = a.as_mut() else {
            return Ok(());
        };
        let s = &mut a.spent;
        s.bootstraps = s.bootstraps.saturating_add(bootstraps);
        s.bytes = s.bytes.saturating_add(bytes);
        a.steps += 1;
        if !s.stopped {
            let late =
                a.steps % CLOCK_EVERY == 0 && a.meter.deadline.is_some_and(|d| Instant::now() >= d);
            s.stopped = late || s.bootstraps > a.meter.bootstraps || s.bytes > a.meter.bytes;
        }
        if !s.stopped {
            return Ok(());
        }
        let m = a.meter;
        Err(BuildError::Stopped {
            bootstraps: s.bootstraps,
            bytes: s.bytes,
            why: if s.bootstraps > m.bootstraps {
                format!("over its limit of {} bootstraps", m.bootstraps)
            } else if s.bytes > m.bytes {
                format!("over its limit of {} bytes", m.bytes)
            } else {
                "past its deadline".into()
            },
        })
    })
}

/// Whether the meter in force has stopped its build: what is made after
/// that is not to be kept.
pub fn stopped() -> bool {
    ACTIVE.with(|a| a.borrow().as_ref().is_some_and(|a| a.spent.stopped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Counts add up, the first step over a limit and every one after it
    /// fail, and outside a run nothing is counted.
    #[test]
    fn a_meter_stops_at_its_limits_and_stays_stopped() {
        assert_eq!(spend(1 << 40, 1 << 40), Ok(()), "no meter in force");
        let meter = Meter {
            bootstraps: 3,
            bytes: 1000,
            deadline: None,
        };
        let ((), spent) = meter.run(|| {
            for _ in 0..3 {
                spend(1, 10).unwrap();
            }
            assert!(!stopped());
            let e = spend(1, 10).unwrap_err();
            assert!(e.to_string().contains("limit of 3 bootstraps"), "{e}");
            assert!(stopped());
            assert!(spend(0, 0).is_err(), "stays stopped");
        });
        assert_eq!(
            spent,
            Spent {
                bootstraps: 4,
                bytes: 40,
                stopped: true
            }
        );
        assert!(!stopped(), "the meter ended with its run");
        let bytes = Meter { bytes: 15, ..meter };
        let (r, _) = bytes.run(|| (spend(0, 10), spend(0, 10)));
        assert!(r.0.is_ok() && r.1.unwrap_err().to_string().contains("15 bytes"));
    }

    /// A deadline in the past stops the build within [`CLOCK_EVERY`]
    /// steps.
    #[test]
    fn a_meter_stops_past_its_deadline() {
        let meter = Meter {
            deadline: Some(Instant::now() - Duration::from_millis(1)),
            ..Meter::unlimited()
        };
        let (steps, spent) = meter.run(|| (1..).find(|_| spend(0, 0).is_err()).unwrap());
        assert_eq!(steps, CLOCK_EVERY);
        assert!(spent.stopped);
    }

    /// An inner run's counts go to the outer one, which is in force again
    /// afterwards; a panic inside a run puts the outer one back too.
    #[test]
    fn runs_nest() {
        let outer = Meter {
            bootstraps: 5,
            ..Meter::unlimited()
        };
        let ((), spent) = outer.run(|| {
            let ((), inner) = Meter::unlimited().run(|| spend(4, 0).unwrap());
            assert_eq!(inner.bootstraps, 4);
            spend(1, 0).unwrap();
            assert!(spend(1, 0).is_err());
            let caught = std::panic::catch_unwind(|| Meter::unlimited().run(|| panic!("inside")));
            assert!(caught.is_err());
            assert!(stopped(), "the outer meter is in force again");
        });
        assert_eq!(spent.bootstraps, 6);
    }
}
