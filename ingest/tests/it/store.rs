//! Tests of store.
#[allow(unused_imports)]
use crate::common::*;
