// Prometheus metrics of alert evaluation and webhook delivery (lib/metrics.ts's registry).
import client from 'prom-client';
import { registry } from '../lib/metrics.ts';

export const alertMetrics = {
  evaluations: new client.Counter({ name: 'p2ptel_alert_evaluations_total', help: 'Rule evaluations (one per rule and snapshot)', registers: [registry] }),
  snapshotSeconds: new client.Histogram({
    name: 'p2ptel_alert_evaluation_duration_seconds',
    help: 'Time to evaluate every rule on one snapshot',
    buckets: [0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1, 2, 5],
    registers: [registry],
  }),
  questions: new client.Counter({ name: 'p2ptel_alert_questions_total', help: 'Figure computations of evaluations (rules sharing a question share one)', registers: [registry] }),
  firing: new client.Gauge({ name: 'p2ptel_alert_rules_firing', help: 'Rules firing at the last evaluated snapshot', registers: [registry] }),
  incidents: new client.Counter({ name: 'p2ptel_alert_incidents_total', help: 'Incidents opened and resolved', labelNames: ['change'], registers: [registry] }),
  deliveries: new client.Counter({ name: 'p2ptel_webhook_attempts_total', help: 'Webhook delivery attempts by outcome', labelNames: ['outcome'], registers: [registry] }),
};
