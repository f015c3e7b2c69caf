-- Indexes for the dashboard's lists and pages at 100,000 runs.
-- Runs by machine: the machine page and the machine list count runs, builds and benchmarks per
-- machine; without it they scan every run (about 100 ms per page).
CREATE INDEX runs_machine ON runs(machine_id, benchmark, build_id);
-- Runs by benchmark, covering the per-benchmark counts of builds and machines on the home page
-- (58 ms -> 7 ms); it serves every lookup the narrower runs_bench did.
CREATE INDEX runs_bench_build ON runs(benchmark, build_id, machine_id);
DROP INDEX runs_bench;
