"""Thin Dagster asset definitions over the prm, verifiers and warehouse libraries."""
