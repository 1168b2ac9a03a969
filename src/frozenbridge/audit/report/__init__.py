"""The audit's page: Markdown and its figure, written from the audit's JSON."""
