-- Hardening: what a token may write, idempotency keys bound to the content they carried, and
-- shared comparisons deduplicated by what they freeze.

-- Globs of the machines and build labels a token may upload for; NULL means any (the
-- behaviour of tokens created before scopes existed).
ALTER TABLE tokens ADD COLUMN machines_glob TEXT;
ALTER TABLE tokens ADD COLUMN builds_glob TEXT;

-- sha256 of the upload a key was first used for: the same key with other content is refused.
ALTER TABLE idempotency_keys ADD COLUMN content_hash TEXT;

-- sha256 of a comparison's settings and runs: sharing the same comparison twice gives one id.
ALTER TABLE comparisons ADD COLUMN content_hash TEXT;
CREATE UNIQUE INDEX comparisons_content ON comparisons (content_hash);
