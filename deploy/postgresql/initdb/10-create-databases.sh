#!/bin/sh
# Runs once, on an empty data directory: one role and database for the booking service, one role for Temporal.
set -e

# Temporal's schema tool only creates tables, so its two databases are made here, owned by its own role;
# the booking role owns its database so migrations can create tables and trusted extensions (btree_gist).
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v booking_password="$BOOKING_DB_PASSWORD" \
  -v temporal_password="$TEMPORAL_DB_PASSWORD" <<'SQL'
CREATE ROLE booking LOGIN PASSWORD :'booking_password';
CREATE DATABASE booking OWNER booking;
CREATE ROLE temporal LOGIN PASSWORD :'temporal_password';
CREATE DATABASE temporal OWNER temporal;
CREATE DATABASE temporal_visibility OWNER temporal;
SQL
