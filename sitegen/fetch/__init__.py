"""The content source: API client, v2/v1 readers, records, cache and sync."""
