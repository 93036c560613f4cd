// A latency probe in its own process (so that the downloads of a benchmark do not delay its own
// timing): GET `url` one request after another until stdin closes, then print every latency (ms)
// as JSON on stdout.
import http from 'node:http';

const [url, token] = process.argv.slice(2) as [string, string];
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const times: number[] = [];
let statusErrors = 0;
let stop = false;
process.stdin.on('end', () => (stop = true));
process.stdin.resume();

function once(): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    http
      .get(url, { agent, headers: { Authorization: `Bearer ${token}` } }, (res) => {
        res.resume();
        res.on('end', () => {
          times.push(performance.now() - started);
          if (res.statusCode !== 200) statusErrors++;
          resolve();
        });
      })
      .on('error', reject);
  });
}

process.stdout.write('probing\n');
while (!stop) {
  await once();
  await new Promise((r) => setTimeout(r, 5));
}
process.stdout.write(`${JSON.stringify({ times, statusErrors })}\n`);
agent.destroy();
