#!/bin/sh
# Creates the booking namespace and the search attributes operators filter bookings by; safe to run on every start.
set -eu

namespace="${TEMPORAL_NAMESPACE:?TEMPORAL_NAMESPACE is required}"
retention="${TEMPORAL_NAMESPACE_RETENTION:-720h}"

# TLS, mutual TLS and an API key come from the same TEMPORAL_* variables the booking processes read (Temporal's
# environment configuration: TEMPORAL_TLS, TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_CLIENT_CERT_PATH, ...).

attempt=0
until temporal operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; do
  attempt=$((attempt + 1))
  if [ "$attempt" -ge 30 ]; then
    echo "Temporal at $TEMPORAL_ADDRESS is not healthy after $attempt attempts" >&2
    exit 1
  fi
  sleep 2
done

if temporal operator namespace describe --address "$TEMPORAL_ADDRESS" --namespace "$namespace" >/dev/null 2>&1; then
  echo "namespace $namespace exists"
else
  temporal operator namespace create --address "$TEMPORAL_ADDRESS" --namespace "$namespace" --retention "$retention"
fi

created_any=false
for attribute in BookingStatus=Keyword RouteId=Keyword TripId=Keyword CustomerId=Keyword DepartureTime=Datetime \
  BoardingStop=Keyword AlightingStop=Keyword; do
  name="${attribute%%=*}"
  type="${attribute#*=}"
  # A new namespace is unknown to the frontend until its namespace cache refreshes, so creation is retried.
  attempt=0
  until temporal operator search-attribute list --address "$TEMPORAL_ADDRESS" --namespace "$namespace" 2>/dev/null |
    grep -qw "$name"; do
    attempt=$((attempt + 1))
    if [ "$attempt" -ge 30 ]; then
      echo "could not create search attribute $name in namespace $namespace" >&2
      exit 1
    fi
    if temporal operator search-attribute create --address "$TEMPORAL_ADDRESS" --namespace "$namespace" \
      --name "$name" --type "$type"; then
      created_any=true
    else
      sleep 2
    fi
  done
done

if [ "$created_any" = true ]; then
  # Frontends pick up new search attributes on their next namespace cache refresh (every 10 s by default);
  # waiting here keeps the API and workers, which start after this job, from using them too early.
  sleep 15
fi
echo "namespace $namespace is ready with its search attributes"
