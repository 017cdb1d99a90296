//! `hearth keygen` and `hearth info`.

use std::path::Path;

use hearth::backend::CpuBackend;
use hearth::crypto::files::{load_ciphertexts, read_info, FileKind};
use hearth::{
    Bundle, ClientKey, CompiledProgram, CompressedServerKey, Error, ParameterSet, ServerKey,
    ServerKeySizes,
};
use indicatif::{ProgressBar, ProgressStyle};

/// A bar over named steps, on stderr.
pub fn steps(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .expect("valid template"),
    );
    bar
}

/// A bar over the bootstraps of a run: done / total, rate, time left.
pub fn pbs_bar(total: usize) -> ProgressBar {
    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} PBS  {per_sec}  {eta} left {msg}",
        )
        .expect("valid template"),
    );
    bar
}

/// The cpu backend on `threads` threads, advancing `bar` as bootstraps finish.
pub fn cpu_with_bar<'k>(
    server: &'k ServerKey,
    threads: usize,
    bar: &ProgressBar,
) -> Result<CpuBackend<'k>, Error> {
    Ok(CpuBackend::new(server, Some(threads))?.with_progress(advance(bar)))
}

/// A backend's progress callback that moves `bar` to the bootstraps done.
pub fn advance(bar: &ProgressBar) -> impl Fn(usize, usize) + Send + Sync + 'static {
    let bar = bar.clone();
    move |done, _| bar.set_position(done as u64)
}

/// tfhe-rs keys (default parameters) and a pool of `threads` workers that
/// each hold its server key (tfhe-rs keeps the key per thread, and its
/// operations fan out over the current pool): run tfhe-rs inside
/// `pool.install`. With `engine` gpu, the key is tfhe-rs's `CudaServerKey`,
/// so its integer operations run on the GPU (`HEARTH_REQUIRE_GPU` rules
/// as for hearth's own gpu backend).
pub fn tfhe_pool(
    threads: usize,
    engine: crate::engine::Engine,
) -> Result<(tfhe::ClientKey, rayon::ThreadPool), Error> {
    eprintln!("generating tfhe-rs keys (default parameters)...");
    let config = tfhe::ConfigBuilder::default().build();
    let ck = tfhe::ClientKey::generate(config);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Config(e.to_string()))?;
    if engine == crate::engine::Engine::Gpu {
        if let Some(set) = crate::engine::tfhe_gpu_key(&ck)? {
            pool.broadcast(|_| set());
            pool.install(set);
            return Ok((ck, pool));
        }
    }
    let sk = tfhe::ServerKey::new(&ck);
    pool.broadcast(|_| tfhe::set_server_key(sk.clone()));
    pool.install(|| tfhe::set_server_key(sk.clone()));
    Ok((ck, pool))
}

/// Generates keys for a secure set, with progress.
pub fn generate(params: &'static ParameterSet) -> (ClientKey, ServerKey) {
    let bar = steps(2);
    bar.set_message(format!("{}: secret keys", params.name));
    let client = ClientKey::generate(params);
    bar.inc(1);
    bar.set_message(format!("{}: bootstrap and key-switch keys", params.name));
    let server = client.server_key();
    bar.inc(1);
    bar.finish_and_clear();
    (client, server)
}

/// `hearth keygen`: keys for `params` written into `out`; with
/// `compressed`, server.key holds the seeded (compressed) form.
pub fn keygen(params: &'static ParameterSet, out: &Path, compressed: bool) -> Result<(), Error> {
    std::fs::create_dir_all(out).map_err(|source| hearth::FileError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    let bar = steps(2);
    bar.set_message(format!("{}: secret keys", params.name));
    let client = ClientKey::generate(params);
    bar.inc(1);
    bar.set_message(format!("{}: bootstrap and key-switch keys", params.name));
    let server = if compressed {
        Written::Compressed(client.compressed_server_key())
    } else {
        Written::Plain(client.server_key())
    };
    bar.inc(1);
    bar.finish_and_clear();
    let bar = steps(2);
    bar.set_message("writing client.key");
    client.save(&out.join("client.key"))?;
    bar.inc(1);
    bar.set_message("writing server.key");
    let server_path = out.join("server.key");
    match &server {
        Written::Plain(k) => k.save(&server_path)?,
        Written::Compressed(k) => k.save(&server_path)?,
    }
    bar.finish_and_clear();
    let size = std::fs::metadata(&server_path)
        .map(|m| m.len())
        .unwrap_or_default();
    println!(
        "{}: key {} written to {} (client.key, server.key: {} bytes{})",
        params.name,
        client.key_id(),
        out.display(),
        size,
        if compressed { ", compressed" } else { "" }
    );
    Ok(())
}

/// The server key `hearth keygen` writes.
enum Written {
    Plain(ServerKey),
    Compressed(CompressedServerKey),
}

/// `hearth info`: the header of any hearth file, then the file read fully
/// (so damage is reported).
pub fn info(file: &Path) -> Result<(), Error> {
    let info = read_info(file)?;
    let p = info.params.params();
    println!("file:        {}", file.display());
    println!("kind:        {}", info.kind.name());
    println!("format:      version {}", info.version);
    println!("parameters:  {} ({})", p.name, p.source);
    println!("key id:      {}", info.key_id);
    let size = std::fs::metadata(file)
        .map_err(|source| hearth::FileError::Io {
            path: file.to_path_buf(),
            source,
        })?
        .len();
    println!(
        "size:        {size} bytes (payload {} bytes)",
        info.payload_len
    );
    // Read it fully, so corruption is reported here too.
    match info.kind {
        FileKind::ClientKey => drop(ClientKey::load(file)?),
        FileKind::ServerKey => {
            drop(ServerKey::load(file)?);
            let sizes = ServerKeySizes::of(p);
            println!(
                "compressed:  {} bytes of keys with `keygen --compressed` ({:.1}x smaller)",
                sizes.compressed(),
                sizes.decompressed() as f64 / sizes.compressed() as f64
            );
        }
        FileKind::CompressedServerKey => {
            let sizes = CompressedServerKey::load(file)?.sizes();
            println!(
                "keys:        bootstrap key {} bytes, key switch {} bytes (ciphertext bodies; masks as 128-bit seeds)",
                sizes.bootstrap_compressed, sizes.keyswitch_compressed
            );
            println!(
                "expands to:  a server key of {} bytes (bootstrap key {}, key switch {}), {:.1}x; \
                 every command that reads server.key decompresses it on load",
                sizes.decompressed(),
                sizes.bootstrap,
                sizes.keyswitch,
                sizes.decompressed() as f64 / sizes.compressed() as f64
            );
        }
        FileKind::Ciphertexts => {
            println!("ciphertexts: {}", load_ciphertexts(file, None)?.len());
        }
        FileKind::Program => crate::deploy::describe_program(&CompiledProgram::load(file)?, None),
        FileKind::Bundle => crate::deploy::describe_bundle(&Bundle::load(file)?),
    }
    println!("status:      ok");
    Ok(())
}
