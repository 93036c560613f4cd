// Combines partition states into a snapshot: stream summaries of every window, per-customer and
// platform rows, the session classes of breakdowns (snapshot-breakdowns.ts) and the per-day series
// files, exactly as if computed from the deduplicated reports (docs/warehouse-state.md).
// A window (asOf - w, asOf] is assembled from pieces that lie wholly inside it: hour pieces, and
// the raw reports of an hour that an edge cuts (a report is a piece of its own). A day's series is
// its state's own file, hard-linked into the snapshot, unless the state holds reports after asOf:
// then that day is computed from its raw reports up to asOf.
import type { DbSession } from '../duckdb/index.ts';
import { planCombine, type CombineInput, type CustomerFigures } from '../states/index.ts';
import { writeSeriesDays } from './series-days.ts';
import { writeSummaries, type SummaryCounts } from './snapshot-summaries.ts';
import { createSessionClasses, writeBreakdownFiles } from './snapshot-breakdowns.ts';
import { dropRelations } from '../duckdb/index.ts';
import { createWindowPieces } from '../states/index.ts';

export interface CombineResult {
  customers: Map<string, CustomerFigures>;
  platformRows: number;
  /** Raw reports read because a window edge cuts an hour, or reports after asOf share its day. */
  edgeReportsRead: number;
  /** Layered states whose cut hours or asOf's minute were read from their layers' report files. */
  layeredStatesCut: number;
  /** Class units (class-units.ts) whose session classes this combine computed, and all it linked. */
  classUnits: { computed: number; linked: number };
  /** Summary bases made (summary-bases.ts), and streams summed from one or from all of their classes. */
  summaries: SummaryCounts;
  /** Files of the state area this combine used besides states (compacted hours, class units' classes, series blocks): kept by retention. */
  usedFiles: string[];
}

/** The session's relations of a combine, dropped once the snapshot's files are written. */
const COMBINE_RELATIONS = [
  'window_pieces',
  'edge_reports',
  'summaries',
  'summaries_inc',
  'added_up',
  'session_classes',
  'session_classes_fresh',
  'session_classes_settled',
  'summary_bases',
  'session_classes_cut',
  'partial_pieces',
  'partial_series',
];

export async function combineStates(s: DbSession, input: CombineInput): Promise<CombineResult> {
  const plan = planCombine(input);
  const pieces = await createWindowPieces(s, plan);
  const units = await createSessionClasses(s, plan, pieces);
  const { customers, platformRows, summaries, used } = await writeSummaries(s, plan, units);
  await writeBreakdownFiles(s, plan, units.files);
  const series = await writeSeriesDays(s, plan, customers);
  await dropRelations(s, COMBINE_RELATIONS);
  return {
    customers,
    platformRows,
    edgeReportsRead: pieces.edgeReportsRead + series.edgeReportsRead,
    layeredStatesCut: new Set([...pieces.layeredStatesCut, ...series.layeredStatesCut]).size,
    usedFiles: [...pieces.usedFiles, ...units.used, ...used, ...series.usedFiles],
    classUnits: { computed: units.computed, linked: units.units },
    summaries,
  };
}
