#!/bin/sh
set -eu
if [ -n "${NGINX_ENTRYPOINT_LOCAL_RESOLVERS:-}" ]; then
  NGINX_LOCAL_RESOLVERS=$(awk '/^nameserver/ { printf "%s ", ($2 ~ /:/ ? "[" $2 "]" : $2) }' /etc/resolv.conf)
  export NGINX_LOCAL_RESOLVERS="${NGINX_LOCAL_RESOLVERS% }"
fi
output="${NGINX_ENVSUBST_OUTPUT_DIR:-/etc/nginx/conf.d}"
defined=$(env | cut -d= -f1 | sed 's/^/$/' | tr '\n' ' ')
for template in /etc/nginx/templates/*.template; do
  [ -e "$template" ] || continue
  target="$output/$(basename "$template" .template)"
  envsubst "$defined" <"$template" >"$target"
  echo "rendered $template into $target"
done
exec "$@"
