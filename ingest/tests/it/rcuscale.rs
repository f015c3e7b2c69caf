//! Tests of rcuscale.
#[allow(unused_imports)]
use crate::common::*;
