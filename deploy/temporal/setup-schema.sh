#!/bin/sh
# Creates or upgrades Temporal's tables in the databases made by deploy/postgresql/initdb; safe to run on every start.
set -eu

schema_root=/etc/temporal/schema/postgresql/v12

until nc -z -w 5 "$SQL_HOST" "$SQL_PORT"; do
  echo "waiting for PostgreSQL at $SQL_HOST:$SQL_PORT"
  sleep 2
done

# setup-schema only records version 0.0 on a fresh database; update-schema then applies the versions not yet applied.
temporal-sql-tool --db temporal setup-schema -v 0.0
temporal-sql-tool --db temporal update-schema -d "$schema_root/temporal/versioned"
temporal-sql-tool --db temporal_visibility setup-schema -v 0.0
temporal-sql-tool --db temporal_visibility update-schema -d "$schema_root/visibility/versioned"
echo 'Temporal schema is up to date'
