//! PLACEHOLDER: replaced by the real parser.

use super::Format;
use crate::error::{ErrorKind, ParseError};
use crate::lines::Lines;
use crate::model::Ctx;

pub struct FunctionGraph;

impl Format for FunctionGraph {
    fn name(&self) -> &'static str {
        "function_graph"
    }
    fn description(&self) -> &'static str {
        "function_graph"
    }
    fn sniff(&self, _head: &str) -> u32 {
        0
    }
    fn parse(&self, _lines: &mut Lines<'_>, _ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        Err(ParseError::new(
            ErrorKind::Unsupported("not written yet".into()),
            0,
        ))
    }
}
