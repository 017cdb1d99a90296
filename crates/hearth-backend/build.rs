//! With the `gpu` feature, compiles hearth's one CUDA file (the bootstrap
//! input combinations) with nvcc, for `HEARTH_GPU_SM` (default 90, H100)
//! with PTX beside it for later GPUs.

fn main() {
    #[cfg(feature = "gpu")]
    {
        let src = "src/gpu/combine.cu";
        println!("cargo:rerun-if-changed={src}");
        println!("cargo:rerun-if-env-changed=HEARTH_GPU_SM");
        let sm = std::env::var("HEARTH_GPU_SM").unwrap_or_else(|_| "90".into());
        // The shared CUDA runtime, as tfhe-cuda-backend links it: two
        // runtimes in one process (cc's default is the static one) can
        // make kernels fail to launch.
        cc::Build::new()
            .cuda(true)
            .cudart("shared")
            .flag(format!(
                "-gencode=arch=compute_{sm},code=[sm_{sm},compute_{sm}]"
            ))
            .flag("-O3")
            .file(src)
            .compile("hearth_gpu");
    }
}
