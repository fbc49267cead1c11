//! MIG geometry: which layouts fit on one GPU.

use gpu_trust_model::catalogue::{self, GpuModel};
use gpu_trust_model::geometry::{
    layouts, layouts_in, maximal_layouts, maximal_layouts_in, place_counts, validate_placement,
    GeometryError, Layout, ProfileSet,
};
use proptest::prelude::*;

fn model(id: &str) -> &'static GpuModel {
    catalogue::lookup(id).unwrap()
}

fn h100() -> &'static GpuModel {
    model("H100-SXM5-80GB")
}

fn pairs(layout: &Layout) -> Vec<(&'static str, u8)> {
    layout
        .instances()
        .iter()
        .map(|i| (i.profile().name, i.start()))
        .collect()
}

#[test]
fn h100_has_19_maximal_layouts_over_the_standard_profiles() {
    let set = ProfileSet::from_names(
        h100(),
        &["1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"],
    )
    .unwrap();
    assert_eq!(set, ProfileSet::standard(h100()).unwrap());
    let maximal = maximal_layouts_in(&set);
    assert_eq!(maximal.len(), 19);
    assert!(maximal.iter().any(|l| l.to_string() == "7g.80gb@0"));
    assert!(maximal
        .iter()
        .any(|l| l.to_string() == "4g.40gb@0 + 3g.40gb@4"));
    // Every standard 8-slice part has the same 19.
    for id in ["A100-SXM4-40GB", "H200-SXM-141GB", "B200", "GH200-96GB"] {
        let set = ProfileSet::standard(model(id)).unwrap();
        assert_eq!(maximal_layouts_in(&set).len(), 19, "{id}");
    }
}

#[test]
fn four_g_and_three_g_fit_only_as_4g_at_0_and_3g_at_4() {
    let l = place_counts(h100(), &[("4g.40gb", 1), ("3g.40gb", 1)]).unwrap();
    assert_eq!(pairs(&l), vec![("4g.40gb", 0), ("3g.40gb", 4)]);
    let with_those_counts: Vec<&Layout> = layouts(h100())
        .unwrap()
        .iter()
        .filter(|l| l.count("4g.40gb") == 1 && l.count("3g.40gb") == 1 && l.instances().len() == 2)
        .collect();
    assert_eq!(with_those_counts.len(), 1);
    assert!(validate_placement(h100(), &[("3g.40gb", 4), ("4g.40gb", 0)]).is_ok());
    assert!(matches!(
        validate_placement(h100(), &[("3g.40gb", 0), ("4g.40gb", 4)]),
        Err(GeometryError::StartNotAllowed {
            profile: "4g.40gb",
            start: 4,
            ..
        })
    ));
    assert!(matches!(
        validate_placement(h100(), &[("4g.40gb", 0), ("3g.40gb", 0)]),
        Err(GeometryError::Overlap { .. })
    ));
}

#[test]
fn two_4g_never_fit() {
    assert_eq!(
        place_counts(h100(), &[("4g.40gb", 2)]),
        Err(GeometryError::TooMany {
            profile: "4g.40gb",
            count: 2,
            max: 1
        })
    );
    assert!(validate_placement(h100(), &[("4g.40gb", 0), ("4g.40gb", 0)]).is_err());
}

#[test]
fn seven_1g_fit_and_strand_slice_7() {
    let l = place_counts(h100(), &[("1g.10gb", 7)]).unwrap();
    assert_eq!(l.instances().len(), 7);
    assert_eq!(l.free_slices(), vec![7]);
    assert_eq!(l.stranded_slices(), vec![7]);
    assert!(l.is_maximal());
    let starts: Vec<u8> = l.instances().iter().map(|i| i.start()).collect();
    assert_eq!(starts, vec![0, 1, 2, 3, 4, 5, 6]);
    assert!(matches!(
        validate_placement(h100(), &[("1g.10gb", 7)]),
        Err(GeometryError::StartNotAllowed { start: 7, .. })
    ));
}

#[test]
fn four_1g_20gb_fill_the_gpu() {
    let l = place_counts(h100(), &[("1g.20gb", 4)]).unwrap();
    assert_eq!(
        pairs(&l),
        vec![
            ("1g.20gb", 0),
            ("1g.20gb", 2),
            ("1g.20gb", 4),
            ("1g.20gb", 6)
        ]
    );
    assert!(l.stranded_slices().is_empty());
    assert_eq!(l.compute_slices(), 4);
    assert_eq!(l.memory_mib(), 4 * 20096);
}

#[test]
fn three_2g_and_one_1g_fit() {
    let l = place_counts(h100(), &[("2g.20gb", 3), ("1g.10gb", 1)]).unwrap();
    assert_eq!(
        pairs(&l),
        vec![
            ("2g.20gb", 0),
            ("2g.20gb", 2),
            ("2g.20gb", 4),
            ("1g.10gb", 6)
        ]
    );
    assert_eq!(l.compute_slices(), 7);
    assert_eq!(l.stranded_slices(), vec![7]);
}

#[test]
fn gpu_operator_default_configs_are_valid_on_h100() {
    // default-mig-parted-config: all-balanced, all-1g.10gb.me, all-2g.20gb, all-3g.40gb.
    for counts in [
        vec![("1g.10gb", 2), ("2g.20gb", 1), ("3g.40gb", 1)],
        vec![("1g.10gb+me", 1)],
        vec![("2g.20gb", 3)],
        vec![("3g.40gb", 2)],
        vec![("7g.80gb", 1)],
    ] {
        assert!(place_counts(h100(), &counts).is_ok(), "{counts:?}");
    }
    // mig-parted writes `+`; the device plugin's resource form works too.
    let a = place_counts(h100(), &[("1g.10gb+me", 1), ("1g.10gb", 6)]).unwrap();
    let b = place_counts(h100(), &[("1g.10gb.me", 1), ("1g.10gb", 6)]).unwrap();
    assert_eq!(a, b);
}

#[test]
fn one_media_extension_per_gpu() {
    let a30 = model("A30");
    assert!(place_counts(a30, &[("1g.6gb+me", 1), ("2g.12gb", 1)]).is_ok());
    assert_eq!(
        place_counts(a30, &[("1g.6gb+me", 1), ("2g.12gb+me", 1)]),
        Err(GeometryError::MediaExtensions { count: 2 })
    );
}

#[test]
fn counts_that_do_not_fit_are_reported() {
    let err = place_counts(h100(), &[("3g.40gb", 2), ("1g.10gb", 1)]).unwrap_err();
    assert!(matches!(err, GeometryError::NoPlacement { .. }));
    assert_eq!(
        err.to_string(),
        "2 x 3g.40gb + 1 x 1g.10gb cannot be placed together on one H100-SXM5-80GB: no arrangement of these instances fits its memory slices"
    );
    assert!(matches!(
        place_counts(h100(), &[("4g.40gb", 1), ("2g.20gb", 2)]),
        Err(GeometryError::ComputeExceeded {
            needed: 8,
            available: 7,
            ..
        })
    ));
    let err = place_counts(h100(), &[("5g.50gb", 1)]).unwrap_err();
    assert!(err.to_string().starts_with(
        "H100-SXM5-80GB has no MIG profile `5g.50gb`; its profiles: 1g.10gb, 1g.10gb+me"
    ));
    assert_eq!(
        place_counts(model("L40S"), &[("1g.10gb", 1)]),
        Err(GeometryError::NoMig { model: "L40S" })
    );
    assert!(layouts(model("T4")).is_err());
}

#[test]
fn empty_and_zero_counts_are_the_empty_layout() {
    let l = place_counts(h100(), &[("1g.10gb", 0)]).unwrap();
    assert!(l.is_empty());
    assert_eq!(l.to_string(), "(empty)");
    let none: [(&str, u32); 0] = [];
    assert!(place_counts(h100(), &none).unwrap().is_empty());
    assert!(validate_placement(h100(), &[]).unwrap().is_empty());
    assert!(layouts(h100()).unwrap()[0].is_empty());
}

#[test]
fn a30_layouts() {
    let a30 = model("A30");
    let set = ProfileSet::standard(a30).unwrap();
    let names: Vec<String> = maximal_layouts_in(&set)
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert_eq!(
        names,
        vec![
            "1g.6gb@0 + 1g.6gb@1 + 1g.6gb@2 + 1g.6gb@3",
            "1g.6gb@0 + 1g.6gb@1 + 2g.12gb@2",
            "2g.12gb@0 + 1g.6gb@2 + 1g.6gb@3",
            "2g.12gb@0 + 2g.12gb@2",
            "4g.24gb@0",
        ]
    );
}

#[test]
fn layouts_serialise_with_instances_and_stranded_slices() {
    let l = place_counts(h100(), &[("1g.10gb", 7)]).unwrap();
    let v = serde_json::to_value(&l).unwrap();
    assert_eq!(v["instances"][0]["profile"], "1g.10gb");
    assert_eq!(v["instances"][6]["start"], 6);
    assert_eq!(v["computeSlices"], 7);
    assert_eq!(v["freeSlices"], serde_json::json!([7]));
    assert_eq!(v["strandedSlices"], serde_json::json!([7]));
}

#[test]
fn restricted_sets_only_use_their_profiles() {
    let set = ProfileSet::from_names(h100(), &["3g.40gb"]).unwrap();
    let all: Vec<String> = layouts_in(&set).iter().map(|l| l.to_string()).collect();
    assert_eq!(
        all,
        vec!["(empty)", "3g.40gb@0", "3g.40gb@0 + 3g.40gb@4", "3g.40gb@4"]
    );
    let maximal: Vec<String> = maximal_layouts_in(&set)
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert_eq!(maximal, vec!["3g.40gb@0 + 3g.40gb@4"]);
    assert!(ProfileSet::from_names(h100(), &["9g.1tb"]).is_err());
    // Over every profile there are more maximal layouts than over the standard ones.
    assert!(maximal_layouts(h100()).unwrap().len() > 19);
}

#[test]
fn layout_enumeration_is_cached_and_deterministic() {
    let a = layouts(h100()).unwrap();
    let b = layouts(h100()).unwrap();
    assert!(std::ptr::eq(a, b));
    let x = place_counts(h100(), &[("2g.20gb", 1), ("1g.10gb", 2)]).unwrap();
    let y = place_counts(h100(), &[("1g.10gb", 2), ("2g.20gb", 1)]).unwrap();
    assert_eq!(x, y);
    assert_eq!(x.to_string(), "1g.10gb@0 + 1g.10gb@1 + 2g.20gb@2");
}

fn mig_models() -> Vec<&'static GpuModel> {
    catalogue::all()
        .iter()
        .filter(|m| m.supports_mig())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Every enumerated layout validates as an explicit placement (in any order), its instances
    /// never overlap, and its counts place again.
    #[test]
    fn enumerated_layouts_validate(model_pick in 0usize..64, mask in any::<u64>(), rotate in 0usize..8) {
        let models = mig_models();
        let m = models[model_pick % models.len()];
        let g = m.mig.unwrap();
        let names: Vec<&str> = g.profiles.iter().enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0).map(|(_, p)| p.name).collect();
        let set = ProfileSet::from_names(m, &names).unwrap();
        for l in layouts_in(&set) {
            let mut input = pairs(l);
            let len = input.len();
            if len > 0 { input.rotate_left(rotate % len); }
            let again = validate_placement(m, &input).unwrap();
            prop_assert_eq!(&again, l);
            for (a, i) in l.instances().iter().enumerate() {
                prop_assert!(set.contains(i.profile()));
                for j in &l.instances()[a + 1..] {
                    prop_assert!(i.end() <= j.start() || j.end() <= i.start(), "{} overlaps", l);
                }
            }
            prop_assert!(l.compute_slices() <= u32::from(g.compute_slices));
            let counts: Vec<(&str, u32)> = l.counts().into_iter().collect();
            let placed = place_counts(m, &counts).unwrap();
            prop_assert_eq!(placed.counts(), l.counts());
        }
    }

    /// A maximal layout admits no further instance of the set; every other layout admits one.
    #[test]
    fn maximal_means_nothing_else_fits(model_pick in 0usize..64, mask in any::<u64>()) {
        let models = mig_models();
        let m = models[model_pick % models.len()];
        let g = m.mig.unwrap();
        let names: Vec<&str> = g.profiles.iter().enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0).map(|(_, p)| p.name).collect();
        let set = ProfileSet::from_names(m, &names).unwrap();
        let maximal = maximal_layouts_in(&set);
        for l in layouts_in(&set) {
            let addable = set.profiles().any(|p| (0..g.memory_slices).any(|s| l.can_add(p.name, s)));
            prop_assert_eq!(!addable, maximal.contains(&l), "{}", l);
        }
    }

    /// Arbitrary input never panics, and an accepted placement really is valid.
    #[test]
    fn arbitrary_placements_are_judged_without_panics(
        model_pick in 0usize..64,
        items in proptest::collection::vec((0usize..12, any::<u8>()), 0..10),
    ) {
        let models = catalogue::all();
        let m = &models[model_pick % models.len()];
        let names: Vec<String> = items.iter().map(|(p, _)| match m.mig {
            Some(g) if *p < g.profiles.len() => g.profiles[*p].name.to_string(),
            _ => format!("{p}g.{p}gb"),
        }).collect();
        let input: Vec<(&str, u8)> = names.iter().map(String::as_str).zip(items.iter().map(|(_, s)| *s)).collect();
        if let Ok(l) = validate_placement(m, &input) {
            prop_assert!(layouts(m).unwrap().contains(&l));
        }
        let counts: Vec<(&str, u32)> = input.iter().map(|(n, s)| (*n, u32::from(*s % 4))).collect();
        if let Ok(l) = place_counts(m, &counts) {
            prop_assert!(layouts(m).unwrap().contains(&l));
        }
    }
}

#[test]
fn geometry_errors_read_well() {
    let e = validate_placement(h100(), &[("1g.10gb", 7)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "1g.10gb cannot start at memory slice 7; its placements are {0,1,2,3,4,5,6}:1"
    );
    let e = validate_placement(h100(), &[("4g.40gb", 0), ("2g.20gb", 2)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "2g.20gb@2 overlaps 4g.40gb@0: they share memory slices"
    );
}
