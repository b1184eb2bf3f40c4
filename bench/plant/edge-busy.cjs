// A planted regression for the load benchmark (BENCH_PLANT=edge): loaded into the service with
// `node --require`, it holds the event loop for BENCH_PLANT_US microseconds (default 200) on
// every request before the service's own edge sees it, as a slow check at the edge would. The
// bench's goals must turn MISS with it; nothing in src/ knows of it.
const http = require('node:http');

const spinNs = BigInt(Math.round(Number(process.env.BENCH_PLANT_US ?? 200) * 1000));
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, ...args) {
  if (event === 'request') {
    const until = process.hrtime.bigint() + spinNs;
    while (process.hrtime.bigint() < until) {
      // busy: the planted cost
    }
  }
  return emit.call(this, event, ...args);
};
