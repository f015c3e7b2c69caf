//! Tests of hackbench.
#[allow(unused_imports)]
use crate::common::*;
