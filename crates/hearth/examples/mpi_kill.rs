//! Probe (temporary, mpi-work branch): what Open MPI does when a rank dies
//! while rank 0 waits on it.
#[cfg(feature = "mpi")]
fn main() {
    use mpi::traits::*;
    let universe = mpi::initialize().unwrap();
    let world = universe.world();
    println!("rank {} pid {}", world.rank(), std::process::id());
    if world.rank() == 0 {
        let mut x = 0u64;
        let t = std::time::Instant::now();
        // Polls with a probe so a timeout can be kept.
        loop {
            if let Some((msg, _)) = world.process_at_rank(1).immediate_matched_probe() {
                msg.matched_receive_into(&mut x);
                println!("got {x}");
                break;
            }
            if t.elapsed().as_secs() > 8 {
                eprintln!("rank 0: rank 1 did not answer within 8 s");
                world.abort(3);
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    } else {
        std::thread::sleep(std::time::Duration::from_secs(30));
        world.process_at_rank(0).send(&1u64);
    }
}
#[cfg(not(feature = "mpi"))]
fn main() {}
