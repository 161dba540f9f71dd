//! The C ABI's face of the table of points (W01): `libthread_cancel.so` exports `tc_NAME` for
//! exactly the rows whose `tc` column says the C ABI has it, and — built beside the Rust
//! crate's feature `interpose`, as `cargo build --workspace --all-features` builds it — defines
//! each C library function once, and only the table's interposed rows.
#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use thread_cancel::__points::ROWS;

/// The global symbols `path` exports (its dynamic table).
fn exported(path: &Path) -> BTreeSet<String> {
    thread_cancel_fixtures::defined_functions(path, true)
}

/// `libthread_cancel.so` built by this test's cargo in a target directory of its own (`dir`
/// under the test's profile directory), with `args` added to `cargo build -p thread-cancel-ffi`.
fn build(dir: &str, args: &[&str]) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/<test> -> target/<profile>
    let profile = exe.parent().unwrap().parent().unwrap().to_path_buf();
    let target = profile.join(dir);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "-p", "thread-cancel-ffi", "--target-dir"])
        .arg(&target)
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("run cargo build");
    assert!(
        out.status.success(),
        "cargo build -p thread-cancel-ffi {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    target.join("debug/libthread_cancel.so")
}

/// Every row the C ABI has (`tc` column `point` or `own`, and the checked forms) is exported as
/// `tc_NAME`; no row it does not have is.
#[test]
fn w01_the_c_abi_exports_a_tc_point_for_exactly_the_rows_that_say_so() {
    let syms = exported(&build("ffi-w01", &[]));
    let mut wrong = Vec::new();
    for r in ROWS.iter().filter(|r| r.tc != "-") {
        let has = syms.contains(&format!("tc_{}", r.name));
        let want = matches!(r.tc, "point" | "own" | "chk");
        if has != want {
            wrong.push(format!(
                "{} (tc: {}, tc_{} exported: {has})",
                r.name, r.tc, r.name
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "the table and the C ABI disagree: {wrong:?}"
    );
}

/// Built with the Rust crate's `interpose` on (as on glibc it always is now), the library links,
/// and the C library functions it defines are the table's interposed rows and its `c_library`
/// rows (each once: the link would fail on a second definition), every `c_library` row among
/// them.
#[test]
fn w01_the_c_abi_with_interpose_links_and_defines_only_interposed_rows() {
    let so = build(
        "ffi-w01-interpose",
        &["--features", "thread-cancel/interpose"],
    );
    let syms = exported(&so);
    let libc = exported(&thread_cancel_fixtures::libc_path());
    let rows: BTreeSet<&str> = ROWS
        .iter()
        .filter(|r| r.interposed() || r.c_library_only())
        .map(|r| r.name)
        .collect();
    let missing: Vec<&str> = ROWS
        .iter()
        .filter(|r| r.c_library_only() && !syms.contains(r.name))
        .map(|r| r.name)
        .collect();
    assert!(
        missing.is_empty(),
        "libthread_cancel.so does not define its `c_library` rows: {missing:?}"
    );
    let defined: Vec<&String> = syms.intersection(&libc).collect();
    let outside: Vec<_> = defined
        .iter()
        .filter(|s| !rows.contains(s.as_str()))
        .collect();
    assert!(
        outside.is_empty(),
        "libthread_cancel.so defines C library functions that are not interposed rows: \
         {outside:?}"
    );
    assert!(
        syms.contains("read") && syms.contains("tc_read"),
        "with interpose: both faces of `read`"
    );
    println!(
        "{} C library functions defined by {}, each an interposed row",
        defined.len(),
        so.display()
    );
}
