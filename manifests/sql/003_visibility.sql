-- kbflow manifest, version 3: indexes for the queries every search and every run makes, so their
-- cost follows what they return, not the size of the manifest.
--
-- documents_by_state: a search reads the versions it must hide (every state but READY in its
--   generation): an index range over the few that are in flight, failed or deleted.
-- tombstones_uncleaned: every run asks for the deletes whose store rows remain.

CREATE INDEX documents_by_state ON documents (generation, state);
CREATE INDEX tombstones_uncleaned ON tombstones (cleaned_at);
