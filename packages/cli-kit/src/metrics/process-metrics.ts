import { readdirSync } from 'node:fs';
import type { MetricsRegistry } from './registry.js';

/**
 * Declares the process metrics on `registry`, read at each scrape: CPU seconds (user, system,
 * total), resident memory, V8 heap used and total, start time, open file descriptors (Linux, from
 * `/proc/self/fd`; left out elsewhere) and the event loop's utilisation since the last scrape.
 */
export function registerProcessMetrics(registry: MetricsRegistry): void {
  const cpu = (pick: (u: NodeJS.CpuUsage) => number) => () => [
    { labels: {}, value: pick(process.cpuUsage()) / 1e6 },
  ];
  registry.collectedCounter({
    name: 'process_cpu_user_seconds_total',
    help: 'User CPU time spent, in seconds.',
    collect: cpu((u) => u.user),
  });
  registry.collectedCounter({
    name: 'process_cpu_system_seconds_total',
    help: 'System CPU time spent, in seconds.',
    collect: cpu((u) => u.system),
  });
  registry.collectedCounter({
    name: 'process_cpu_seconds_total',
    help: 'User and system CPU time spent, in seconds.',
    collect: cpu((u) => u.user + u.system),
  });
  registry.gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident memory size, in bytes.',
    collect: () => [{ labels: {}, value: process.memoryUsage.rss() }],
  });
  registry.gauge({
    name: 'nodejs_heap_size_used_bytes',
    help: 'V8 heap used, in bytes.',
    collect: () => [{ labels: {}, value: process.memoryUsage().heapUsed }],
  });
  registry.gauge({
    name: 'nodejs_heap_size_total_bytes',
    help: 'V8 heap allocated, in bytes.',
    collect: () => [{ labels: {}, value: process.memoryUsage().heapTotal }],
  });
  const started = Math.round((Date.now() - process.uptime() * 1000) / 1000);
  registry.gauge({
    name: 'process_start_time_seconds',
    help: 'Start time of the process since the Unix epoch, in seconds.',
    collect: () => [{ labels: {}, value: started }],
  });
  registry.gauge({
    name: 'process_open_fds',
    help: 'Open file descriptors (Linux only).',
    collect: () => {
      if (process.platform !== 'linux') return [];
      return [{ labels: {}, value: readdirSync('/proc/self/fd').length }];
    },
  });
  const perf = globalThis.performance;
  let last = perf.eventLoopUtilization();
  registry.gauge({
    name: 'nodejs_eventloop_utilization_ratio',
    help: 'Share of time the event loop was busy since the previous scrape (0 to 1).',
    collect: () => {
      const now = perf.eventLoopUtilization();
      const delta = perf.eventLoopUtilization(now, last);
      last = now;
      return [{ labels: {}, value: delta.utilization }];
    },
  });
}
