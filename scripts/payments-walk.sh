#!/usr/bin/env bash
# `npm run payments:walk`: runs docs/payments.md's "Walk a 3-D Secure payment by hand" block against a running stack.
set -euo pipefail
page="$(dirname "$0")/../docs/payments.md"
# The shell block between the page's walk markers, fences left out: the steps exactly as a person reads them.
walk=$(sed -n '/^<!-- payments:walk -->$/,/^<!-- \/payments:walk -->$/p' "$page" | sed '/^<!--/d; /^```/d')
if [ -z "$walk" ]; then
  echo "payments:walk: no walk block in $page" >&2
  exit 1
fi
for tool in curl jq; do
  command -v "$tool" >/dev/null || { echo "payments:walk: $tool is needed" >&2; exit 1; }
done
# Every call bounded, every failure fatal; the block's own poll bounds the wait for the webhook.
bash -euo pipefail -c "
curl() { command curl --max-time 10 \"\$@\"; }
$walk
if [ \"\$STATUS\" != CONFIRMED ]; then
  echo \"payments:walk: booking \$BOOKING is \$STATUS, not CONFIRMED, 30 s after the challenge\" >&2
  exit 1
fi
echo \"payments:walk: booking \$BOOKING CONFIRMED by the processor's webhook\"
"
