//! Tests of trace stat.
#[allow(unused_imports)]
use crate::common::*;
