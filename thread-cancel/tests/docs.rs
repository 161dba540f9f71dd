//! Every guide in `thread-cancel/docs/` is reachable where users look: a module of
//! `thread_cancel::guide` includes it (so it is on docs.rs), and the guide index names it.

/// Each `.md` file under `docs/`, included by `src/guide.rs`.
#[test]
fn every_guide_in_docs_is_included_by_the_guide_module() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let guide = std::fs::read_to_string(root.join("src/guide.rs")).unwrap();
    let mut found = Vec::new();
    let mut dirs = vec![root.join("docs")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                found.push(p.strip_prefix(root).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    assert!(found.len() >= 5, "guides found: {found:?}");
    let missing: Vec<_> = found
        .iter()
        .filter(|f| !guide.contains(&format!("include_str!(\"../{f}\")")))
        .collect();
    assert!(
        missing.is_empty(),
        "guides not on docs.rs (not included by src/guide.rs): {missing:?}"
    );
}
