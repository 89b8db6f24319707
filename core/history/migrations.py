"""The history file's tables, version by version: MIGRATIONS[N] takes a file from PRAGMA user_version N to N+1."""

from __future__ import annotations

from core.history import summary

# Migration N takes the file from user_version N-1 to N: SQL, or a function of the connection for what SQL
# cannot compute. Append; never edit a released one's effect on a file.
MIGRATIONS: tuple[tuple, ...] = (
    (
        """CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            kind TEXT NOT NULL DEFAULT 'train',   -- other kinds (a batch-size sweep) keep their JSON in payload
            status TEXT NOT NULL,
            schema_version INTEGER NOT NULL,
            config TEXT NOT NULL DEFAULT '{}',
            host TEXT NOT NULL DEFAULT '{}',
            device TEXT NOT NULL DEFAULT '{}',
            error TEXT,
            started_at TEXT,
            finished_at TEXT,
            stored_at TEXT NOT NULL,
            origin TEXT NOT NULL DEFAULT 'local', -- 'local' or 'imported'
            owner_host TEXT,                      -- while running: who writes it, to spot a dead writer
            owner_pid INTEGER,
            owner_token TEXT,
            payload TEXT
        )""",
        "CREATE INDEX runs_by_kind_time ON runs (kind, started_at)",
        """CREATE TABLE epochs (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            epoch INTEGER NOT NULL,
            metrics TEXT NOT NULL,                -- EpochMetrics as JSON: new fields need no migration
            PRIMARY KEY (run_id, epoch)
        ) WITHOUT ROWID""",
    ),
    (  # a training run's summary (core.history.summary), so listing never reads an epoch
        "ALTER TABLE runs ADD COLUMN epochs_done INTEGER NOT NULL DEFAULT 0",
        # No declared type: a value keeps the type its file gave it (1 stays 1, not 1.0), as the list printed it.
        "ALTER TABLE runs ADD COLUMN final_test_accuracy",
        "ALTER TABLE runs ADD COLUMN median_epoch_seconds",  # its values: migration 3's backfill, under 3's name
    ),
    # the steady epoch is core.analysis.compare's, the mean the page and the CLI say: renamed, every run again
    (
        "ALTER TABLE runs RENAME COLUMN median_epoch_seconds TO steady_epoch_seconds",
        summary.backfill,
    ),
    (  # schema version 4: what the engine measured, as its own record; and each run's profiler trace, gzipped
        "ALTER TABLE runs ADD COLUMN measured TEXT",
        """CREATE TABLE traces (
            run_id TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
            xspace BLOB NOT NULL                  -- an XSpace (tensorflow.tsl.profiler.protobuf), gzipped
        ) WITHOUT ROWID""",
    ),
)
