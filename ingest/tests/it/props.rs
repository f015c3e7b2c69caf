//! Tests of props.
#[allow(unused_imports)]
use crate::common::*;
