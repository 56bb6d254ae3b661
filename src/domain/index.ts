// The booking domain's public surface: pure, deterministic rules shared by the workflow and both fronts.
export * from './booking';
export * from './changes';
export * from './errors';
export * from './fares';
export * from './ids';
export * from './lifecycle';
export * from './money';
export * from './roles';
export * from './time';
export * from './validation';
