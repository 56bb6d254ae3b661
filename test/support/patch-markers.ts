// The patch ids a workflow history's markers record: which guarded changes a booking ran with.
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';

export function patchIdsOf(events: temporal.api.history.v1.IHistoryEvent[] | null | undefined): unknown[] {
  return (events ?? [])
    .filter((event) => event.markerRecordedEventAttributes?.markerName === 'core_patch')
    .map((event) => {
      const [payload] = event.markerRecordedEventAttributes?.details?.['patch-data']?.payloads ?? [];
      return payload === undefined
        ? undefined
        : defaultPayloadConverter.fromPayload<{ id?: unknown }>(payload).id;
    });
}
