-- A series block's run is checked once per statement rather than once per row. The foreign
-- key ran a trigger for every block, each looking its run up and locking it: an upload's
-- 800 blocks (a 4-CPU x 200-function trace_stat set) all name the same run, and 16,000 blocks
-- took 89-101 ms to insert with the key against 39-43 ms with the check below. The check
-- looks each distinct run up once, after the statement, and fails it as the key did
-- (SQLSTATE 23503). Deleting a run still deletes its blocks.
--
-- The key's row lock is what kept a run from being deleted between the check and the commit;
-- here every write transaction holds the database's write lock (`store`'s WRITE_LOCK) from
-- its start to its commit, so no other transaction can delete a run meanwhile.
ALTER TABLE series_block DROP CONSTRAINT IF EXISTS series_block_run_id_fkey;

CREATE FUNCTION series_block_run_check() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    missing BIGINT;
BEGIN
    -- A scalar subquery, not NOT EXISTS: the planner turns NOT EXISTS into an anti join,
    -- and the plan cached for this function then read every run on each statement.
    SELECT n.run_id INTO missing
    FROM (SELECT DISTINCT run_id FROM new_blocks) n
    WHERE (SELECT r.id FROM runs r WHERE r.id = n.run_id) IS NULL
    LIMIT 1;
    IF FOUND THEN
        RAISE foreign_key_violation USING
            MESSAGE = format('series_block: run %s does not exist', missing),
            TABLE = 'series_block', COLUMN = 'run_id';
    END IF;
    RETURN NULL;
END
$$;

-- A trigger with transition tables takes one event, hence two.
CREATE TRIGGER series_block_run_insert AFTER INSERT ON series_block
    REFERENCING NEW TABLE AS new_blocks
    FOR EACH STATEMENT EXECUTE FUNCTION series_block_run_check();
CREATE TRIGGER series_block_run_update AFTER UPDATE ON series_block
    REFERENCING NEW TABLE AS new_blocks
    FOR EACH STATEMENT EXECUTE FUNCTION series_block_run_check();

CREATE FUNCTION runs_delete_blocks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM series_block b USING old_runs o WHERE b.run_id = o.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER runs_delete_blocks AFTER DELETE ON runs
    REFERENCING OLD TABLE AS old_runs
    FOR EACH STATEMENT EXECUTE FUNCTION runs_delete_blocks();
