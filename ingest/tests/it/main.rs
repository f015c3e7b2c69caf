//! Integration tests of the ingest crate: one module per format, plus detection.

mod common;
mod cyclictest;
mod detect;
mod function_graph;
mod hackbench;
mod latency;
mod latency_synthetic;
mod limits;
mod lkp;
mod mmtests;
mod perf_stat;
mod props;
mod rcuscale;
mod refscale;
mod samples;
mod stripped;
mod time;
mod trace_stat;
