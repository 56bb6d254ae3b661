// The workflow bundle's entry point: every workflow function the `bookings` task queue runs.
export { bookingWorkflow } from './booking';
export { tripCancellationWorkflow } from './trip-cancellation';
export { paymentReconciliationWorkflow } from './payment-reconciliation';
export { partnerWebhookDeliveryWorkflow } from './partner-webhooks';
