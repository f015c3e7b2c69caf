//! Tests of refscale.
#[allow(unused_imports)]
use crate::common::*;
