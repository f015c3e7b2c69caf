//! Integration tests of the quiescent server.
mod cli;
mod upload;
