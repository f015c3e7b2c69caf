//! Unit tests of the pairing rules, with labels as mails write them.

use super::*;

fn l(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn pairs(v: &[&str]) -> Vec<(String, String)> {
    pair(&l(v), false, None, None)
        .unwrap()
        .into_iter()
        .map(|p| (p.base, p.head))
        .collect()
}

fn one(base: &str, head: &str) -> Vec<(String, String)> {
    vec![(base.to_string(), head.to_string())]
}

#[test]
fn before_after_either_order() {
    assert_eq!(pairs(&["AFTER:", "BEFORE:"]), one("BEFORE:", "AFTER:"));
    assert_eq!(pairs(&["before", "after"]), one("before", "after"));
}

#[test]
fn without_with_the_patch() {
    assert_eq!(
        pairs(&["with the patch", "without the patch"]),
        one("without the patch", "with the patch")
    );
    assert_eq!(
        pairs(&["without Ulad's patch", "with Ulad's patch"]),
        one("without Ulad's patch", "with Ulad's patch")
    );
    assert_eq!(
        pairs(&["with the patchset", "without the patchset"]),
        one("without the patchset", "with the patchset")
    );
}

#[test]
fn original_apply_patch_vanilla_patched_base_series() {
    assert_eq!(
        pairs(&["original", "apply patch"]),
        one("original", "apply patch")
    );
    assert_eq!(pairs(&["patched", "vanilla"]), one("vanilla", "patched"));
    assert_eq!(pairs(&["base", "+series"]), one("base", "+series"));
    assert_eq!(pairs(&["current", "new"]), one("current", "new"));
}

#[test]
fn reverted_is_the_base_even_with_with() {
    assert_eq!(
        pairs(&["with commit 1234abcd", "with reverted 1234abcd"]),
        one("with reverted 1234abcd", "with commit 1234abcd")
    );
}

#[test]
fn older_kernel_version_is_the_base() {
    assert_eq!(
        pairs(&["v5.1 (deferred)", "v4.19"]),
        one("v4.19", "v5.1 (deferred)")
    );
    assert_eq!(pairs(&["v6.8-rc1", "v6.8"]), one("v6.8-rc1", "v6.8"));
    assert_eq!(pairs(&["4.9.0", "4.19.0"]), one("4.9.0", "4.19.0"));
}

#[test]
fn scenarios_shared_by_both_sides_make_one_comparison_each() {
    let labels = [
        "Now, results with no load on the system; with the commit c229828ca6bc62d",
        "Now, results with no load on the system; with reverted c229828ca6bc62d",
        "Results with 100% load on one CPU and no load on 2nd CPU with c229828ca6bc62d",
        "Results with 100% load on one CPU and no load on 2nd CPU with reverted c229828ca6bc62d",
        "Results with 100% load on both CPUs with c229828ca6bc62d",
        "Results with 100% load on both CPUs with reverted c229828ca6bc62d",
    ];
    let p = pair(&l(&labels), false, None, None).unwrap();
    assert_eq!(p.len(), 3);
    for x in &p {
        assert!(x.base.contains("reverted"), "{x:?}");
        assert!(!x.head.contains("reverted"), "{x:?}");
        assert_eq!(scenario_of(&x.base), scenario_of(&x.head));
    }
    assert_eq!(p[0].scenario.as_deref(), Some("no load on system"));
    assert_eq!(
        p[1].scenario.as_deref(),
        Some("100% load on one cpu no load on 2nd cpu")
    );
    assert_eq!(p[2].scenario.as_deref(), Some("100% load on both cpus"));
}

#[test]
fn hackbench_group_counts_are_scenarios() {
    let p = pair(
        &l(&["-g 10 before", "-g 20 before", "-g 10 after", "-g 20 after"]),
        false,
        None,
        None,
    )
    .unwrap();
    assert_eq!(p.len(), 2);
    assert_eq!(
        (p[0].base.as_str(), p[0].head.as_str()),
        ("-g 10 before", "-g 10 after")
    );
    assert_eq!(
        (p[1].base.as_str(), p[1].head.as_str()),
        ("-g 20 before", "-g 20 after")
    );
}

#[test]
fn disable_enable_pairs_by_name() {
    let p = pair(
        &l(&["one-disable", "one-enable", "ten-disable", "ten-enable"]),
        false,
        None,
        None,
    )
    .unwrap();
    assert_eq!(p.len(), 2);
    assert_eq!(p[1].base, "ten-disable");
    assert_eq!(p[1].head, "ten-enable");
    assert_eq!(p[1].scenario.as_deref(), Some("ten"));
}

#[test]
fn one_base_several_heads() {
    let p = pair(
        &l(&["vanilla", "patched-v1", "patched-v2"]),
        false,
        None,
        None,
    )
    .unwrap();
    assert_eq!(p.len(), 2);
    assert!(p.iter().all(|x| x.base == "vanilla"));
}

#[test]
fn summary_columns_take_the_first_as_base() {
    let p = pair(&l(&["1a2b3c4d5e", "9f8e7d6c5b"]), true, None, None).unwrap();
    assert_eq!(
        (p[0].base.as_str(), p[0].head.as_str()),
        ("1a2b3c4d5e", "9f8e7d6c5b")
    );
    // The same labels as free blocks are ambiguous.
    assert!(matches!(
        pair(&l(&["1a2b3c4d5e", "9f8e7d6c5b"]), false, None, None),
        Err(PairingError::Ambiguous(_))
    ));
}

#[test]
fn ambiguous_lists_the_blocks_and_the_flags() {
    let e = pair(&l(&["run A", "run B", "run C"]), false, None, None).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("\"run A\", \"run B\", \"run C\""), "{msg}");
    assert!(msg.contains("--base-block TEXT --head-block TEXT"), "{msg}");
}

#[test]
fn one_block_is_too_few() {
    let e = pair(&l(&["before"]), false, None, None).unwrap_err();
    assert_eq!(e, PairingError::TooFewBlocks(l(&["before"])));
    assert!(
        e.to_string()
            .contains("only one labelled block (\"before\")")
    );
}

#[test]
fn chosen_blocks_override_the_words() {
    let labels = l(&["run A", "run B", "run C"]);
    let p = pair(&labels, false, Some("c"), Some("run a")).unwrap();
    assert_eq!((p[0].base.as_str(), p[0].head.as_str()), ("run C", "run A"));
    let e = pair(&labels, false, Some("zzz"), Some("run a")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("--base-block \"zzz\" matches none"),
        "{e}"
    );
}

#[test]
fn chosen_substrings_pair_by_scenario() {
    let labels = l(&["idle old", "idle new", "busy old", "busy new"]);
    let p = pair(&labels, false, Some("old"), Some("new")).unwrap();
    assert_eq!(p.len(), 2);
    assert_eq!(p[1].base, "busy old");
    assert_eq!(p[1].head, "busy new");
}

#[test]
fn sides_of_single_words() {
    assert_eq!(side_of("without"), Some(Side::Base));
    assert_eq!(side_of("with"), Some(Side::Head));
    assert_eq!(side_of("w/o patch"), Some(Side::Base));
    assert_eq!(side_of("Unmarked accesses (status quo)"), Some(Side::Base));
    assert_eq!(side_of("kernel.ftrace_enabled = 0"), None);
    assert_eq!(side_of("hackbench"), None);
}

#[test]
fn the_more_deeply_quoted_block_is_the_base() {
    let labels = l(&["rig 1", "rig 2"]);
    let p = pair_quoted(&labels, &[0, 2], false, None, None).unwrap();
    assert_eq!((p[0].base.as_str(), p[0].head.as_str()), ("rig 2", "rig 1"));
    let p = pair_quoted(&labels, &[1, 0], false, None, None).unwrap();
    assert_eq!((p[0].base.as_str(), p[0].head.as_str()), ("rig 1", "rig 2"));
    // Same depth: still ambiguous.
    assert!(pair_quoted(&labels, &[1, 1], false, None, None).is_err());
}

#[test]
fn vanilla_beside_kernels_named_for_their_patches() {
    let p = pair(
        &l(&["vanilla", "fastfsnotify-v1", "fastfsnotify-v2"]),
        true,
        None,
        None,
    )
    .unwrap();
    assert_eq!(p.len(), 2);
    assert!(p.iter().all(|x| x.base == "vanilla"));
    assert_eq!(p[1].head, "fastfsnotify-v2");
    // Even when vanilla is not the first column.
    let p = pair(&l(&["next-buddy", "vanilla"]), true, None, None).unwrap();
    assert_eq!(
        (p[0].base.as_str(), p[0].head.as_str()),
        ("vanilla", "next-buddy")
    );
}

#[test]
fn headings_each_followed_by_their_patched_block() {
    let v = [
        "openSUSE config",
        "Patched",
        "allmodconfig",
        "allmodconfig: Patched",
    ];
    let got = pair(&l(&v), false, None, None).unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!((got[0].base.as_str(), got[0].head.as_str()), (v[0], v[1]));
    assert_eq!((got[1].base.as_str(), got[1].head.as_str()), (v[2], v[3]));
    assert_eq!(got[1].scenario.as_deref(), Some("allmodconfig"));
    // A head before its heading is not such a section.
    assert!(pair(&l(&[v[1], v[0], v[3], v[2]]), false, None, None).is_err());
}

#[test]
fn numbered_configurations_first_is_the_base() {
    let v = [
        "(1) tip",
        "(2) tip UCLAMP=y",
        "(3) tip + skip",
        "(4) tip + skip",
    ];
    let got = pairs(&v);
    assert_eq!(got.len(), 3);
    assert!(got.iter().all(|(b, _)| b == "(1) tip"));
    assert_eq!(got[2].1, "(4) tip + skip");
    // Out of order is not a numbering.
    assert!(pair(&l(&["(2) a", "(1) b", "(3) c"]), false, None, None).is_err());
}
