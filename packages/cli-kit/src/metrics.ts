export {
  type DaemonMetricSources,
  type ObservedChain,
  registerDaemonMetrics,
} from './metrics/daemon-metrics.js';
export {
  EXPOSITION_CONTENT_TYPE,
  type ExpositionFamily,
  type ExpositionSample,
  escapeLabelValue,
  formatValue,
  renderExposition,
} from './metrics/exposition.js';
export { HEALTH_PATHS, type HealthAnswer, healthAnswer, type ReadinessChecks } from './metrics/health.js';
export { MetricsServer, type MetricsServerOptions } from './metrics/metrics-server.js';
export { registerProcessMetrics } from './metrics/process-metrics.js';
export {
  type CollectedCounterDef,
  type CollectedGaugeDef,
  Counter,
  Histogram,
  type HistogramDef,
  LATENCY_BUCKETS,
  type MetricDef,
  type MetricLabels,
  type MetricSample,
  MetricsError,
  MetricsRegistry,
} from './metrics/registry.js';
