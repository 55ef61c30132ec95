"""The Dagster code location: definitions, resources, partitions, jobs, schedules, sensors."""
