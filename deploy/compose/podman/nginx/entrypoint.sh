#!/bin/sh
# The official image's entry point contract: executable /docker-entrypoint.d/*.envsh scripts are sourced, then
# /etc/nginx/templates/*.template are rendered (only variables of the environment are replaced) into
# NGINX_ENVSUBST_OUTPUT_DIR.
set -eu
for script in $(find /docker-entrypoint.d/ -follow -type f -name '*.envsh' 2>/dev/null | sort -V); do
  if [ -x "$script" ]; then . "$script"; else echo "ignoring $script, not executable"; fi
done
output="${NGINX_ENVSUBST_OUTPUT_DIR:-/etc/nginx/conf.d}"
defined=$(env | cut -d= -f1 | sed 's/^/$/' | tr '\n' ' ')
for template in /etc/nginx/templates/*.template; do
  [ -e "$template" ] || continue
  target="$output/$(basename "$template" .template)"
  envsubst "$defined" <"$template" >"$target"
  echo "rendered $template into $target"
done
exec "$@"
