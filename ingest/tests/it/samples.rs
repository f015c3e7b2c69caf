//! Tests of samples.
#[allow(unused_imports)]
use crate::common::*;
