-- kbflow manifest, version 2: what a sidecar-less document's text says about its identity.
--
-- documents.identity: JSON of ingest.models.DocumentIdentity: its title without version markers,
--   the marker, the effective date and the text stating it, the repeal statements it makes, and,
--   when it was grouped with other files as versions of one document, the links with their
--   evidence (ingest/parse/identity.py). NULL for versions whose sidecar sets doc_id or version.

ALTER TABLE documents ADD COLUMN identity TEXT;

-- a file's recorded version is looked up by its path on every run
CREATE INDEX documents_by_path ON documents (source_path);
