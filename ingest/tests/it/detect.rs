//! Tests of detect.
#[allow(unused_imports)]
use crate::common::*;
