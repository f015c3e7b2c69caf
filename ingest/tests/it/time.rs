//! Tests of time.
#[allow(unused_imports)]
use crate::common::*;
