// GET /metrics on the API's own port: Prometheus text, for operators only (it is registered on
// the operator router). A scraper without a token uses the separate METRICS_PORT listener.
import type { Router } from '@koa/router';
import { METRICS_CONTENT_TYPE, metricsText } from '../../lib/metrics.ts';

export function metricsRoutes(operators: Router): void {
  operators.get('/metrics', async (ctx) => {
    const text = await metricsText();
    ctx.set('Cache-Control', 'no-store');
    ctx.type = METRICS_CONTENT_TYPE;
    ctx.body = text;
  });
}
