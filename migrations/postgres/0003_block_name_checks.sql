-- Series blocks no longer check their name ids against `names` row by row. On PostgreSQL each
-- such check is a trigger that locks the name's row: five per block made an 800-block insert
-- take 26 ms instead of 9 ms, most of an upload's time in the writer. Names are only ever
-- added, in the transaction that first uses them, and never deleted, so the checks could not
-- fail. The run a block belongs to is still checked (and deleting a run still deletes its
-- blocks). SQLite keeps its checks: there they are an index lookup each.
ALTER TABLE series_block
    DROP CONSTRAINT IF EXISTS series_block_metric_id_fkey,
    DROP CONSTRAINT IF EXISTS series_block_unit_id_fkey,
    DROP CONSTRAINT IF EXISTS series_block_direction_id_fkey,
    DROP CONSTRAINT IF EXISTS series_block_label_id_fkey,
    DROP CONSTRAINT IF EXISTS series_block_statistic_id_fkey;
