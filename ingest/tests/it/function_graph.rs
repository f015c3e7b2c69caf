//! Tests of function graph.
#[allow(unused_imports)]
use crate::common::*;
