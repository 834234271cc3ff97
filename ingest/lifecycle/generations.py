"""Which generation serves, and the generations a dead run left behind.

The manifest is the one source of truth for the serving generation: kbflow's readers open the
physical collections, tables and files of the manifest's serving generation, never an alias. A
switch writes the manifest first, then points each store's alias (for consumers that read a store
directly) at the same generation. A run killed between the two, or half-way through the aliases,
leaves aliases that `reconcile` points back at the manifest's serving generation; a rebuild killed
before its switch leaves a generation "building" that `reconcile` drops. Rebuilds and rollbacks
reconcile first.
"""

from __future__ import annotations

from typing import Any

from ingest.config import Settings
from ingest.lifecycle import open_generation
from ingest.lock import writer_lock
from ingest.manifest import ManifestStore
from ingest.manifest.records import Generation


def serve(settings: Settings, manifest: ManifestStore, generation: str,
          gate_report: dict[str, Any] | None = None) -> None:
    """Make `generation` the serving one: the manifest (what readers follow), then the aliases."""
    manifest.activate(generation, gate_report)
    point_aliases(settings, generation)


def point_aliases(settings: Settings, generation: str) -> None:
    """Switch every store's alias to `generation` (idempotent)."""
    stores = open_generation(settings, generation)
    try:
        stores.activate()
    finally:
        stores.close()


def drop_generation(settings: Settings, manifest: ManifestStore, generation: Generation) -> None:
    """Delete a generation's stores and manifest rows; it stays listed as dropped."""
    if generation.dimension is not None:  # without one its stores were never opened
        stores = open_generation(settings, generation.generation)
        try:
            stores.drop()
        finally:
            stores.close()
    manifest.drop_generation_rows(generation.generation)


def reconcile(settings: Settings, manifest: ManifestStore) -> list[str]:
    """Point every alias at the manifest's serving generation and drop the generations left
    "building" by a dead run; returns the dropped ones.

    A rebuild holds the data directory's writer lock while it builds, so once this holds the lock
    (taken here, or already by this process) no builder is alive: a generation still "building"
    is a dead run's. Another live writer makes this raise DataDirBusy before it touches anything.
    """
    with writer_lock(settings.data_dir, "generation cleanup"):
        serving = manifest.serving()
        if serving is not None and serving.dimension is not None:
            point_aliases(settings, serving.generation)
        dead = [g for g in manifest.generations() if g.status == "building"]
        for generation in dead:
            drop_generation(settings, manifest, generation)
    return [g.generation for g in dead]
