// The HTTP requests this process's servers have received: the count the preloads of a gateway under load
// (./heap-sampling.mjs, ./promise-count.mjs) divide their figures by. Counting starts when this is imported.
import http from 'node:http';

let served = 0;
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, ...args) {
  if (event === 'request') served++;
  return emit.call(this, event, ...args);
};

export function servedRequests() {
  return served;
}
