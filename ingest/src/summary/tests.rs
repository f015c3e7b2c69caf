use super::*;

#[test]
fn sparse_contexts_fall_back_to_the_hash_index_and_stay_unique() {
    let mut t = SeriesTable::new();
    let spec = |m: usize, scope: usize| {
        SeriesSpec::count(SeriesKey::new(format!("m{m}")).scope(format!("s{scope}")))
    };
    for m in 0..100_000 {
        t.series(&spec(m, 0));
    }
    // Each further scope holds only the last metric: a direct slot would cost 100,000.
    let ids: Vec<SeriesId> = (1..200).map(|s| t.series(&spec(99_999, s))).collect();
    assert!(
        t.dense_slots <= 4 * t.len() + (1 << 16),
        "{}",
        t.dense_slots
    );
    assert!(!t.index.is_empty());
    for (s, id) in (1..200).zip(&ids) {
        assert_eq!(t.series(&spec(99_999, s)), *id);
    }
    assert_eq!(t.series(&spec(5, 0)), 5);
    assert_eq!(t.len(), 100_000 + 199);
    assert_eq!(t.get(ids[3]).scope, "s4");
}

#[test]
fn samples_with_the_marker_bits_are_kept() {
    let mut t = SeriesTable::new();
    let odd = [
        f64::from_bits(EMPTY),
        f64::from_bits(MARK << 32 | 7),
        f64::NAN,
    ];
    let mut ids = Vec::new();
    for (n, v) in odd.iter().enumerate() {
        let id = t.series(&SeriesSpec::count(SeriesKey::new(format!("m{n}"))));
        t.sample(id, *v);
        ids.push(id);
    }
    let two = t.series(&SeriesSpec::count(SeriesKey::new("two")));
    t.sample(two, 1.5);
    t.sample(two, odd[0]);
    t.sample(two, 2.5);
    for (id, v) in ids.iter().zip(odd) {
        let got: Vec<u64> = t.get(*id).samples().map(f64::to_bits).collect();
        assert_eq!(got, [v.to_bits()]);
    }
    let got: Vec<u64> = t.get(two).samples().map(f64::to_bits).collect();
    assert_eq!(got, [1.5f64.to_bits(), odd[0].to_bits(), 2.5f64.to_bits()]);
    let empty = t.series(&SeriesSpec::count(SeriesKey::new("none")));
    assert!(t.get(empty).is_empty() && !t.get(two).is_empty());
    assert_eq!(t.get(two).len(), 3);
}

#[test]
fn same_key_same_id_and_samples_in_order() {
    let mut t = SeriesTable::new();
    let a = SeriesSpec::duration(SeriesKey::new("f.time").scope("cpu1"));
    let b = SeriesSpec::duration(SeriesKey::new("f.time").scope("cpu2"));
    let c = SeriesSpec::count(SeriesKey::new("f.hit").scope("cpu1"));
    let ia = t.series(&a);
    let ib = t.series(&b);
    let ic = t.series(&c);
    assert_eq!(t.series(&a), ia);
    assert!(ia != ib && ib != ic && ia != ic);
    // As in a Dataset, the key alone is the identity: the first unit stays.
    let a_count = SeriesSpec::count(SeriesKey::new("f.time").scope("cpu1"));
    assert_eq!(t.series(&a_count), ia);
    assert_eq!(t.get(ia).unit, &Unit::Seconds);
    t.sample(ia, 1.0);
    t.sample(ia, 3.0);
    t.sample(ib, 2.0);
    let v = t.get(ia);
    assert_eq!(v.samples().collect::<Vec<_>>(), vec![1.0, 3.0]);
    assert_eq!(t.get(ic).len(), 0);
    assert_eq!(t.sample_count(), 3);
    let ds = t.to_dataset();
    assert_eq!(ds.series.len(), 3);
    assert_eq!(ds.get("f.time", "cpu2").unwrap().samples, vec![2.0]);
    // The JSON of a view is the JSON of the equivalent `Series`.
    let from_ds = serde_json::to_value(&ds.series).unwrap();
    let from_table = serde_json::to_value(AllSeries(&t)).unwrap();
    assert_eq!(from_ds, from_table);
}

#[test]
fn copy_samples_is_samples_in_order() {
    let mut t = SeriesTable::new();
    let one = t.series(&SeriesSpec::count(SeriesKey::new("one")));
    let many = t.series(&SeriesSpec::count(SeriesKey::new("many")));
    let none = t.series(&SeriesSpec::count(SeriesKey::new("none")));
    t.sample(one, 4.5);
    for v in 0..1000 {
        t.sample(many, f64::from(v) * 0.5);
    }
    let mut out = vec![7.0; 3];
    for s in t.iter() {
        s.copy_samples(&mut out).unwrap();
        assert_eq!(out, s.samples().collect::<Vec<_>>(), "{}", s.metric);
    }
    assert_eq!(t.get(none).len(), 0);
}

/// The same calls on a table that appends on a thread of its own and on one that does not:
/// enough samples to start the thread, series made along the way (some with one sample, some
/// whose first sample has the marker bits), and samples through every path. A third table
/// writes its samples out to a file from 20,000 samples of capacity; its figures and JSON are
/// those of the table that keeps them.
#[test]
fn a_table_with_a_sample_thread_holds_what_one_without_holds() {
    let mut here = SeriesTable::new();
    let mut there = SeriesTable::with_sample_thread();
    let mut spilling = SeriesTable::default();
    spilling.more.threaded_within(20_000);
    let odd = [
        f64::from_bits(EMPTY),
        f64::from_bits(MARK << 32 | 3),
        f64::NAN,
    ];
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..600_000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let v = if x.is_multiple_of(1009) {
            odd[(x % 3) as usize]
        } else {
            f64::from(i) * 0.25
        };
        // Mostly the first few series, now and then a new one.
        let m = if x.is_multiple_of(5003) {
            x % 100_000
        } else {
            x % 7
        };
        let spec = SeriesSpec::count(SeriesKey::new(format!("m{m}")));
        if x.is_multiple_of(3) {
            let id = here.series_sample(&spec, v);
            assert_eq!(there.series_sample(&spec, v), id);
            assert_eq!(spilling.series_sample(&spec, v), id);
        } else {
            let id = here.series(&spec);
            assert_eq!(there.series(&spec), id);
            assert_eq!(spilling.series(&spec), id);
            here.sample(id, v);
            there.sample(id, v);
            spilling.sample(id, v);
        }
    }
    there.finish();
    spilling.finish();
    for t in [&there, &spilling] {
        assert_eq!(here.sample_count(), t.sample_count());
        assert_eq!(here.len(), t.len());
    }
    let bits = |t: &SeriesTable| -> Vec<(String, Vec<u64>)> {
        t.iter()
            .map(|s| {
                let mut v = Vec::new();
                s.each_chunk(&mut |xs| v.extend(xs.iter().map(|x| x.to_bits())))
                    .unwrap();
                assert_eq!(v.len(), s.len());
                (s.metric.to_string(), v)
            })
            .collect()
    };
    let a = bits(&here);
    assert!(a.iter().any(|(_, s)| s.len() > 50_000) && a.iter().any(|(_, s)| s.len() == 1));
    assert_eq!(a, bits(&there));
    assert!(spilling.more.written_out(), "nothing was written out");
    assert_eq!(a, bits(&spilling));
    let json = |t: &SeriesTable| serde_json::to_string(&AllSeries(t)).unwrap();
    assert_eq!(json(&here), json(&spilling));
}

/// A series' samples at given places are those at the same places of all its samples, in a
/// table that keeps them and in one that wrote most of them out: runs of places across a
/// write's segments and into what stayed in memory, single places, the first sample, and a
/// series of one sample.
#[test]
fn values_at_places_are_those_of_the_whole() {
    let mut here = SeriesTable::new();
    let mut spilling = SeriesTable::default();
    spilling.more.threaded_within(20_000);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..300_000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let spec = SeriesSpec::count(SeriesKey::new(format!("m{}", x % 3)));
        let v = f64::from(i) + (x % 1000) as f64 * 1e-3;
        here.series_sample(&spec, v);
        spilling.series_sample(&spec, v);
    }
    // And a series of one sample, held apart from the vectors.
    let one = SeriesSpec::count(SeriesKey::new("one"));
    here.series_sample(&one, 7.5);
    spilling.series_sample(&one, 7.5);
    spilling.finish();
    assert!(spilling.more.written_out(), "nothing was written out");
    for (a, b) in here.iter().zip(spilling.iter()) {
        let all: Vec<f64> = a.samples().collect();
        let n = all.len();
        if n == 1 {
            for s in [&a, &b] {
                let mut got = vec![-1.0];
                s.values_at(&[0], &mut got).unwrap();
                assert_eq!(got, [-1.0, 7.5]);
            }
            continue;
        }
        let mut places: Vec<usize> = vec![0, 1, 2];
        for at in (5..n - 40).step_by(n / 37) {
            places.extend(at..at + 33);
        }
        places.extend(n - 3..n);
        places.dedup();
        // And every place: one run across every segment written.
        for places in [places, (0..n).collect()] {
            for s in [&a, &b] {
                let mut got = vec![-1.0];
                s.values_at(&places, &mut got).unwrap();
                let want: Vec<f64> = places.iter().map(|&p| all[p]).collect();
                assert_eq!(got[0], -1.0, "pushed after what was there");
                assert_eq!(got[1..], want[..]);
            }
        }
    }
}
