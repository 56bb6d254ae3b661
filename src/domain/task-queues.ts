// Temporal task queue names: configuration checks WORKER_TASK_QUEUES against them, workers and the workflow use them.

/** The workflow, and each activity family, can be served by separately scaled workers. */
export const taskQueues = {
  bookings: 'bookings',
  seats: 'booking-seats',
  payments: 'booking-payments',
  notifications: 'booking-notifications',
} as const;

/** The queue name behind each logical queue; one Temporal namespace can host several isolated deployments. */
export type TaskQueueNames = Readonly<Record<keyof typeof taskQueues, string>>;
