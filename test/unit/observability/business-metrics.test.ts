// The business counters as exported: labels, amounts by currency, series present at 0, the overdue-bookings gauge.
import { Registry } from 'prom-client';
import { createBusinessMetrics } from '../../../src/observability/metrics';

describe('createBusinessMetrics', () => {
  it('exports each fact with its labels, refunds with their amount by currency', async () => {
    const metrics = createBusinessMetrics();
    metrics.bookingTransition('created');
    metrics.bookingTransition('not_booked', 'seats_unavailable');
    metrics.seatsHeld(3);
    metrics.seatsReleased(2);
    metrics.payment('declined');
    metrics.refund('succeeded', { amountMinor: 1250, currency: 'EUR' });
    metrics.refund('succeeded', { amountMinor: 800, currency: 'EUR' });
    metrics.refund('failed');
    metrics.compensation('refund_payment', 'failed');
    metrics.notification('sms', 'sent');
    const text = await metrics.registry.metrics();
    expect(text).toContain('bus_booking_booking_transitions_total{transition="created",reason=""} 1');
    expect(text).toContain(
      'bus_booking_booking_transitions_total{transition="not_booked",reason="seats_unavailable"} 1',
    );
    expect(text).toContain('bus_booking_seats_held_total 3');
    expect(text).toContain('bus_booking_seats_released_total 2');
    expect(text).toContain('bus_booking_payments_total{outcome="declined"} 1');
    expect(text).toContain('bus_booking_refunds_total{outcome="succeeded"} 2');
    expect(text).toContain('bus_booking_refunds_total{outcome="failed"} 1');
    expect(text).toContain('bus_booking_refunded_amount_minor_total{currency="EUR"} 2050');
    expect(text).toContain('bus_booking_compensations_total{step="refund_payment",outcome="failed"} 1');
    expect(text).toContain('bus_booking_notifications_total{channel="sms",outcome="sent"} 1');
  });

  it('has every transition and outcome series from the start, at 0', async () => {
    const text = await createBusinessMetrics().registry.metrics();
    for (const transition of ['created', 'confirmed', 'changed', 'cancelled', 'expired', 'completed']) {
      expect(text).toContain(`bus_booking_booking_transitions_total{transition="${transition}",reason=""} 0`);
    }
    expect(text).toContain('bus_booking_payments_total{outcome="approved"} 0');
    expect(text).toContain('bus_booking_compensations_total{step="release_seats",outcome="failed"} 0');
    expect(text).toContain('bus_booking_notifications_total{channel="email",outcome="failed"} 0');
  });

  it('reads the overdue PENDING_PAYMENT bookings at each scrape', async () => {
    let overdue = 2;
    const metrics = createBusinessMetrics(new Registry(), {
      overduePendingPayments: () => Promise.resolve(overdue),
    });
    expect(await metrics.registry.metrics()).toContain('bus_booking_pending_payment_overdue_bookings 2');
    overdue = 0;
    expect(await metrics.registry.metrics()).toContain('bus_booking_pending_payment_overdue_bookings 0');
  });

  it('leaves the gauge out of a scrape when the read model cannot be read, and says why', async () => {
    const failures: unknown[] = [];
    const metrics = createBusinessMetrics(new Registry(), {
      overduePendingPayments: () => Promise.reject(new Error('connection refused')),
      onCollectFailure: (error) => failures.push(error),
    });
    const text = await metrics.registry.metrics();
    expect(text).not.toMatch(/^bus_booking_pending_payment_overdue_bookings \d/m);
    expect(text).toContain('bus_booking_payments_total{outcome="approved"} 0');
    expect(failures).toHaveLength(1);
  });
});
