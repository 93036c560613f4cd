// Progress bars of long commands, on stderr when it is a terminal; imported by the actions only,
// so that `--help` and the command table load no progress-bar library.
import { SingleBar, Presets } from 'cli-progress';

/** A progress bar on stderr when it is a terminal; silent otherwise (logs and pipes stay clean). */
export function progressBar(label: string): { update(percent: number, step?: string): void; stop(): void } {
  if (!process.stderr.isTTY) return { update() {}, stop() {} };
  const bar = new SingleBar(
    { format: `${label} [{bar}] {percentage}% {step}`, stream: process.stderr, hideCursor: true, clearOnComplete: true },
    Presets.shades_classic,
  );
  bar.start(100, 0, { step: '' });
  return {
    update(percent, step = '') {
      bar.update(Math.min(100, Math.max(0, Math.round(percent))), { step });
    },
    stop() {
      bar.stop();
    },
  };
}
