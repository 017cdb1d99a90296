//! What a server process holds, read from `/proc`: its resident memory,
//! its open descriptors, and the bytes of its data folder. [`footprint`]
//! reads them once; a [`Watch`] samples them on a thread of its own and
//! keeps the peaks of a measured window.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// What a process holds at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Resident memory (`VmRSS`), bytes.
    pub rss: u64,
    /// The most resident memory since the process started or its peak
    /// was reset (`VmHWM`), bytes.
    pub hwm: u64,
    /// Open file descriptors (connections, files, the runtime's own).
    pub fds: usize,
    /// Bytes of the files in its data folder.
    pub disk: u64,
}

/// What process `pid` holds now, its data folder being `data` (`None`
/// once it has ended).
pub fn footprint(pid: u32, data: &Path) -> Option<Footprint> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |k| k << 10)
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count();
    Some(Footprint {
        rss: kib("VmRSS:"),
        hwm: kib("VmHWM:"),
        fds,
        disk: folder_bytes(data),
    })
}

/// The CPU time process `pid` has used (user and system, all its
/// threads), from `/proc/PID/stat`; `None` once it has ended.
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces: fields are counted after its ')'.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 here.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(Duration::from_nanos(ticks * 1_000_000_000 / per_second))
}

/// The bytes of every file under `dir` (0 where it cannot be read).
pub fn folder_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => folder_bytes(&e.path()),
            // A file removed since it was listed counts nothing.
            _ => e.metadata().map_or(0, |m| m.len()),
        })
        .sum()
}

/// Resets process `pid`'s peak resident memory (`VmHWM`) to what it holds
/// now (Linux's `clear_refs` 5); false where that is not allowed.
pub fn reset_peak(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

/// The footprint at the start of a window and the most of each measure
/// during it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Peaks {
    /// At the start.
    pub idle: Footprint,
    /// The most of each measure, resident memory from `VmHWM` as well as
    /// the samples, so a spike between two samples counts.
    pub peak: Footprint,
    /// Samples taken.
    pub samples: usize,
}

/// Samples a process every `every` until stopped (the peaks of a window).
pub struct Watch {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Peaks>,
}

impl Watch {
    /// Resets the process's peak memory and starts sampling it.
    pub fn start(pid: u32, data: PathBuf, every: Duration) -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let reset = reset_peak(pid);
        let first = footprint(pid, &data).unwrap_or_default();
        let thread = std::thread::spawn(move || {
            let mut p = Peaks {
                idle: first,
                peak: first,
                samples: 1,
            };
            let mut last = first;
            while !stopped.load(Ordering::Relaxed) {
                std::thread::sleep(every);
                let Some(f) = footprint(pid, &data) else {
                    break;
                };
                p.peak.rss = p.peak.rss.max(f.rss);
                p.peak.fds = p.peak.fds.max(f.fds);
                p.peak.disk = p.peak.disk.max(f.disk);
                p.samples += 1;
                last = f;
            }
            // Without a reset, VmHWM speaks for the window only if it grew.
            if reset || last.hwm > first.hwm {
                p.peak.rss = p.peak.rss.max(last.hwm);
            }
            p.peak.hwm = last.hwm;
            p
        });
        Watch { stop, thread }
    }

    /// Stops sampling: the window's peaks.
    pub fn stop(self) -> Peaks {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("the sampler does not panic")
    }
}

/// Bytes as MiB.
pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_footprint() {
        let dir = std::env::temp_dir().join(format!("hearth-footprint-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("a"), [0u8; 1000]).unwrap();
        std::fs::write(dir.join("sub").join("b"), [0u8; 24]).unwrap();
        let f = footprint(std::process::id(), &dir).unwrap();
        assert!(f.rss > 0 && f.hwm >= f.rss && f.fds >= 3, "{f:?}");
        assert_eq!(f.disk, 1024);
        // Spin a little: the CPU time grows.
        let before = cpu_time(std::process::id()).unwrap();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed() < Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
        }
        assert!(cpu_time(std::process::id()).unwrap() > before);
        assert!(cpu_time(u32::MAX).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(folder_bytes(&dir), 0);
        assert!(footprint(u32::MAX, &dir).is_none());
    }
}
