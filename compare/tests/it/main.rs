//! Integration tests of the statistics engine.

mod changepoint;
mod changepoint_props;
mod policy;
mod props;
mod reference;

/// Relative closeness, with an absolute floor for values near zero.
pub fn close(got: f64, want: f64, rel: f64) -> bool {
    if got == want {
        return true;
    }
    (got - want).abs() <= rel * want.abs().max(got.abs()).max(1e-300) || (got - want).abs() < 1e-300
}

#[track_caller]
pub fn assert_close(what: &str, got: f64, want: f64, rel: f64) {
    assert!(
        close(got, want, rel),
        "{what}: got {got:e}, want {want:e} (rel {rel:e})"
    );
}
