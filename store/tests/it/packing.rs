//! Samples are stored packed: the encoding round-trips every f64 bit for bit, and a corrupt
//! blob is reported rather than misread.

#[test]
fn packed_samples_round_trip_bit_for_bit() {
    let values = [
        0.0,
        -0.0,
        1.5,
        -2.25e-300,
        f64::MAX,
        f64::MIN_POSITIVE,
        f64::INFINITY,
        123_456.789,
    ];
    let blob = store::pack(&values);
    assert_eq!(blob.len(), values.len() * 8);
    // Little-endian: 1.5 is 0x3FF8000000000000, its last byte first.
    assert_eq!(&blob[16..24], &[0, 0, 0, 0, 0, 0, 0xF8, 0x3F]);
    let back = store::unpack(&blob).unwrap();
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&back), bits(&values));
}

#[test]
fn a_truncated_blob_is_an_error() {
    let mut blob = store::pack(&[1.0, 2.0]);
    blob.pop();
    let err = store::unpack(&blob).unwrap_err();
    assert!(err.to_string().contains("not a multiple of 8"), "{err}");
}
