// The pilot reports page (`/portal/reports`): every stream of the customer with its latest report's
// verdict (pass / review), its savings, and a link to each format: the latest report a nightly run
// published (a file the API reads), or one made now for a stream that has none published.
import type { Context } from 'koa';
import pLimit from 'p-limit';
import { streamBelongsTo } from '../../warehouse/ids.ts';
import type { PageState } from '../page-state.ts';
import type { PageReads } from '../figures.ts';
import { pageFrame, type Viewer } from './common.ts';
import { reportLinks, reportVerdict } from './stream.ts';

/** Reports read at once: a published one is a file, but one without may be composed on demand by the API. */
const REPORTS_AT_ONCE = 2;

export async function reportsView(ctx: Context, reads: PageReads, state: PageState, viewer: Viewer) {
  const all = await reads.streams('all');
  const streams = viewer.customerId === null ? all : all.filter((s) => streamBelongsTo(s.streamId, viewer.customerId!));
  const limit = pLimit(REPORTS_AT_ONCE);
  const rows = await Promise.all(
    streams.map((s) =>
      limit(async () => {
        const base = `/portal/streams/${encodeURIComponent(s.streamId)}`;
        const verdict = await reportVerdict(reads, s.streamId);
        return { streamId: s.streamId, href: base, verdict, formats: reportLinks(base, verdict.published) };
      }),
    ),
  );
  return { ...pageFrame(ctx, state, viewer, 'reports'), title: 'Pilot reports', rows, noWindow: true };
}
