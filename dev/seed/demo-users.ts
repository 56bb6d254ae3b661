// Demo accounts, one per role, with known passwords that the start script prints (demo environments only).
import type { Role } from '../../src/domain/roles';

export interface DemoUser {
  email: string;
  password: string;
  displayName: string;
  phone: string | null;
  /** Each demo account has exactly one role, the one it demonstrates. */
  role: Role;
}

export const aliceDemoUser: DemoUser = {
  email: 'alice@example.com',
  password: 'alice-demo-password',
  displayName: 'Alice Martins',
  phone: '+447700900101',
  role: 'customer',
};

export const bobDemoUser: DemoUser = {
  email: 'bob@example.com',
  password: 'bob-demo-password',
  displayName: 'Bob Novák',
  phone: null,
  role: 'customer',
};

export const agentDemoUser: DemoUser = {
  email: 'agent@example.com',
  password: 'agent-demo-password',
  displayName: 'Ana Agent',
  phone: '+447700900102',
  role: 'agent',
};

export const adminDemoUser: DemoUser = {
  email: 'admin@example.com',
  password: 'admin-demo-password',
  displayName: 'Adam Admin',
  phone: null,
  role: 'admin',
};

export const driverDemoUser: DemoUser = {
  email: 'driver@example.com',
  password: 'driver-demo-password',
  displayName: 'Diego Driver',
  phone: null,
  role: 'driver',
};

export const demoUsers: readonly DemoUser[] = [
  aliceDemoUser,
  bobDemoUser,
  agentDemoUser,
  adminDemoUser,
  driverDemoUser,
];
