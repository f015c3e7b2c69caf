//! Tests of perf stat.
#[allow(unused_imports)]
use crate::common::*;
