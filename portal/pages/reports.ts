// The pilot reports page (`/portal/reports`): every stream of the customer with its latest report's
// verdict (pass / review), its savings, and a link to each format.
import type { Context } from 'koa';
import pLimit from 'p-limit';
import { streamBelongsTo } from '../../warehouse/ids.ts';
import type { PageState } from '../page-state.ts';
import type { PageReads } from '../figures.ts';
import { pageFrame, type Viewer } from './common.ts';
import { reportVerdict } from './stream.ts';

/** Reports read at once: each may be composed on demand by the API. */
const REPORTS_AT_ONCE = 2;

export async function reportsView(ctx: Context, reads: PageReads, state: PageState, viewer: Viewer) {
  const all = await reads.streams('all');
  const streams = viewer.customerId === null ? all : all.filter((s) => streamBelongsTo(s.streamId, viewer.customerId!));
  const limit = pLimit(REPORTS_AT_ONCE);
  const rows = await Promise.all(
    streams.map((s) =>
      limit(async () => {
        const base = `/portal/streams/${encodeURIComponent(s.streamId)}`;
        return {
          streamId: s.streamId,
          href: base,
          verdict: await reportVerdict(reads, s.streamId),
          formats: [
            { label: 'HTML', href: `${base}/report.html` },
            { label: 'Markdown', href: `${base}/report.md` },
            { label: 'JSON', href: `${base}/report.json` },
            { label: 'signature (JWS)', href: `${base}/report.jws` },
          ],
        };
      }),
    ),
  );
  return { ...pageFrame(ctx, state, viewer, 'reports'), title: 'Pilot reports', rows, noWindow: true };
}
