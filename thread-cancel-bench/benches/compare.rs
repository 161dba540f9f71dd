//! Every timing target (P1–P8, P4c, defined in REQUIREMENTS.md) in one run: ours, glibc's and the floors, interleaved, as one
//! table, `docs/compare.md` and `docs/compare.svg` (see `thread_cancel_bench::compare`). With
//! `--test` a quick run that writes into the target directory instead.

use std::path::Path;

fn main() {
    thread_cancel_bench::compare::main(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs"),
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("compare"),
    );
}
