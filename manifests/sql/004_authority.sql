-- kbflow manifest, version 4: a document's authority level (policy > notice > faq > chat, as
-- configured by KBFLOW_AUTHORITY_LEVELS), declared by its sidecar or its folder's _meta.yaml.
-- NULL when none was declared. Chunk records carry it too (in their JSON).

ALTER TABLE documents ADD COLUMN authority TEXT;
