//! Link options of the `svcgate` binary.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let linux_gnu = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    // Release builds pack their relative relocations (DT_RELR, glibc 2.36 or later): the loader reads a few KB of
    // them at start instead of about 340 KB, which stayed resident; bench row 6 (idle memory): see bench/RESULTS.md.
    if linux_gnu && std::env::var("PROFILE").as_deref() == Ok("release") {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
