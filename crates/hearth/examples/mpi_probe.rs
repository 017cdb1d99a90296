//! Probe (temporary, mpi-work branch): loopback MPI cost of moving
//! DIGITS_128 big-key LWE ciphertexts (2049 u64) between rank 0 and 1.
#[cfg(feature = "mpi")]
fn main() {
    use mpi::traits::*;
    let universe = mpi::initialize().unwrap();
    let world = universe.world();
    let lwe = 2049usize;
    for batch in [1usize, 16, 256] {
        let rounds = 2000 / batch;
        let mut buf = vec![world.rank() as u64; lwe * batch];
        world.barrier();
        let t = std::time::Instant::now();
        for _ in 0..rounds {
            if world.rank() == 0 {
                world.process_at_rank(1).send(&buf[..]);
                world.process_at_rank(1).receive_into(&mut buf[..]);
            } else if world.rank() == 1 {
                world.process_at_rank(0).receive_into(&mut buf[..]);
                world.process_at_rank(0).send(&buf[..]);
            }
        }
        if world.rank() == 0 {
            let per_ct = t.elapsed().as_secs_f64() / (2 * rounds * batch) as f64;
            println!("batch {batch}: {:.2} us per ciphertext one way", per_ct * 1e6);
        }
    }
}
#[cfg(not(feature = "mpi"))]
fn main() {}
