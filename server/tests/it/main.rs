//! Integration tests of the quiescent server.
mod upload;
