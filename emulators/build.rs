//! Compiles Google's published protos for the GKE emulator's gRPC front (`proto/`: Kubernetes
//! Engine v1, IAM Credentials v1 and what they import) into one encoded descriptor set, read at
//! run time by prost-reflect. protox is a protobuf compiler in Rust, so no `protoc` is needed.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let files = [
        "google/container/v1/cluster_service.proto",
        "google/iam/credentials/v1/iamcredentials.proto",
    ];
    let mut compiler = protox::Compiler::new(["proto"])?;
    compiler.include_imports(true);
    compiler.open_files(files)?;
    // Encoded by protox itself: prost's own descriptor types would drop the options'
    // extensions, and with them every method's `google.api.http` rule.
    let set = compiler.encode_file_descriptor_set();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("cargo sets OUT_DIR")?);
    std::fs::write(out.join("google_apis.bin"), set)?;
    Ok(())
}
