-- kbflow manifest, version 3: indexes for the queries every search and every run makes, so their
-- cost follows what they return, not the size of the manifest.
--
-- documents_by_state: a search reads the versions it must hide (every state but READY in its
--   generation): an index range over the few that are in flight, failed or deleted.
-- tombstones_uncleaned: every run asks for the deletes whose store rows remain.
-- documents_by_root, documents_by_doc: a run reads the versions of the folder, files and
--   documents it touches, not the whole manifest.

CREATE INDEX documents_by_state ON documents (generation, state);
CREATE INDEX tombstones_uncleaned ON tombstones (cleaned_at);
CREATE INDEX documents_by_root ON documents (generation, source_root);
CREATE INDEX documents_by_doc ON documents (doc_id);
