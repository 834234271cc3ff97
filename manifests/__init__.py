"""The manifest store's schema: ordered SQL migrations per engine (shipped as package data)."""
