//! Tests of latency.
#[allow(unused_imports)]
use crate::common::*;
