export * from './contract.js';
export * from './errors.js';
export * from './instance-id.js';
export * from './workload.js';
