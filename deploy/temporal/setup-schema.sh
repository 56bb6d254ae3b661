#!/bin/sh
# Creates or upgrades Temporal's tables in the databases made by deploy/postgresql/initdb; safe to run on every start.
set -eu

# The admin-tools image keeps the schema in /etc/temporal/schema; outside it (npm run stack:cluster) the server
# module's schema folder is given, and temporal-sql-tool is on PATH. It reads SQL_PLUGIN, SQL_HOST, SQL_PORT,
# SQL_USER and SQL_PASSWORD from the environment.
schema_root="${TEMPORAL_SCHEMA_DIR:-/etc/temporal/schema}/postgresql/v12"

# Hosts without nc start this script only once PostgreSQL answers.
if command -v nc >/dev/null 2>&1; then
  until nc -z -w 5 "$SQL_HOST" "$SQL_PORT"; do
    echo "waiting for PostgreSQL at $SQL_HOST:$SQL_PORT"
    sleep 2
  done
fi

# setup-schema only records version 0.0 on a fresh database; update-schema then applies the versions not yet applied.
temporal-sql-tool --db temporal setup-schema -v 0.0
temporal-sql-tool --db temporal update-schema -d "$schema_root/temporal/versioned"
temporal-sql-tool --db temporal_visibility setup-schema -v 0.0
temporal-sql-tool --db temporal_visibility update-schema -d "$schema_root/visibility/versioned"
echo 'Temporal schema is up to date'
