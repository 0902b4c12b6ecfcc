"""The content source: API client, v2/v1 readers, records, stored workspace and sync."""
