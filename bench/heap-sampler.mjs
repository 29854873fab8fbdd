// Which allocations outlive a scavenge, and where they were made (docs/performance.md, sixth pass).
// Load it into a server with `--import` (e.g. BENCH_NODE_FLAGS="--import ./bench/heap-sampler.mjs"),
// then under load: `kill -USR2 PID` starts sampling, a second `kill -USR2 PID` writes
// HEAP_OUT-PID.heapprofile (default /tmp/heap). Only objects that survived their first scavenge
// are kept in the profile (set HEAP_MINOR=1 to keep every allocation). Summarize it with
// `node bench/heap-summary.mjs FILE`.
import fs from 'node:fs';
import inspector from 'node:inspector';

const session = new inspector.Session();
session.connect();
const post = (method, params = {}) =>
  new Promise((resolve, reject) =>
    session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))),
  );

let sampling = false;
process.on('SIGUSR2', async () => {
  if (!sampling) {
    sampling = true;
    await post('HeapProfiler.startSampling', {
      samplingInterval: 8192,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: process.env.HEAP_MINOR === '1',
    });
    process.stderr.write('heap-sampler: sampling\n');
    return;
  }
  sampling = false;
  const { profile } = await post('HeapProfiler.stopSampling');
  const file = `${process.env.HEAP_OUT ?? '/tmp/heap'}-${process.pid}.heapprofile`;
  fs.writeFileSync(file, JSON.stringify(profile));
  process.stderr.write(`heap-sampler: wrote ${file}\n`);
});
