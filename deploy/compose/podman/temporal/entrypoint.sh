#!/bin/sh
# Defaults of the official image's variables; the server renders its configuration file from them.
set -eu
export DB_PORT="${DB_PORT:-5432}" DBNAME="${DBNAME:-temporal}" VISIBILITY_DBNAME="${VISIBILITY_DBNAME:-temporal_visibility}"
export NUM_HISTORY_SHARDS="${NUM_HISTORY_SHARDS:-4}" BIND_ON_IP="${BIND_ON_IP:-127.0.0.1}"
export PROMETHEUS_ENDPOINT="${PROMETHEUS_ENDPOINT:-127.0.0.1:8000}"
export DYNAMIC_CONFIG_FILE_PATH="${DYNAMIC_CONFIG_FILE_PATH:-config/dynamicconfig/docker.yaml}"
exec temporal-server --config-file /etc/temporal/config/temporal.yaml --allow-no-auth start
