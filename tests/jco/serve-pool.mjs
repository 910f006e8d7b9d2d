// Serves a wasi-http component transpiled by `jco transpile --instantiation sync` from a
// fixed pool of long-lived worker threads, each holding one component instance that it
// reuses request after request:
//
//   node serve-pool.mjs <transpiled dir> <name> <host> <port> <workers>
//
// Why not `jco serve`: its default mode runs one instance on the main thread, and the
// preview2 shim turns the component's waits into blocking waits, so requests are answered
// one at a time (a send waits behind an open long poll); `--isolate-requests worker` answers
// them side by side but starts a fresh worker (Node isolate, shim thread, instance) for every
// request, which costs ~140 ms each on this machine. Here each worker still answers one
// request at a time, but N of them side by side, and nothing is started per request. Our
// component keeps no request's state in its instance past the request (our host reuses
// instances the same way), so reuse is safe for it; a worker that fails is replaced.
//
// Requests beyond N wait for a free worker: size N above the number of long polls expected
// to be open at once.
import http from "node:http";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";

if (isMainThread) {
  const [dir, name, host, port, size] = process.argv.slice(2);
  if (!dir || !name || !host || !port || !(Number(size) >= 1)) {
    console.error("usage: node serve-pool.mjs <transpiled dir> <name> <host> <port> <workers>");
    process.exit(2);
  }
  await main(resolve(dir), name, host, Number(port), Number(size));
} else {
  await serveInWorker(workerData);
}

async function main(dir, name, host, port, size) {
  // Compiled once here and handed to every worker (a compiled module is shared, not copied).
  const modules = Object.fromEntries(
    readdirSync(dir)
      .filter((f) => f.endsWith(".wasm"))
      .map((f) => [f, new WebAssembly.Module(readFileSync(join(dir, f)))]),
  );
  const data = { module: pathToFileURL(join(dir, `${name}.js`)).href, modules };
  const idle = [];
  const waiting = [];
  const agent = new http.Agent({ keepAlive: true });

  const start = () =>
    new Promise((ready, failed) => {
      const worker = new Worker(new URL(import.meta.url), { workerData: data });
      worker.once("message", ({ port, error }) =>
        error ? failed(new Error(error)) : ready({ worker, port }),
      );
      worker.once("error", failed);
    });
  const release = (entry) => {
    const next = waiting.shift();
    if (next) next(entry);
    else idle.push(entry);
  };
  const replace = (entry) => {
    entry.worker.terminate().finally(() =>
      start().then(release, (e) => {
        console.error("serve-pool: a replacement worker failed to start:", e);
        setTimeout(() => replace(entry), 1000);
      }),
    );
  };
  // The most recently used worker first: its code is the warmest (each worker's isolate
  // tiers up the shared module's functions on its own).
  const acquire = () =>
    idle.length ? Promise.resolve(idle.pop()) : new Promise((r) => waiting.push(r));

  for (const entry of await Promise.all(Array.from({ length: size }, start))) release(entry);

  const server = http.createServer(async (request, response) => {
    const entry = await acquire();
    let done = false;
    const finish = (healthy) => {
      if (done) return;
      done = true;
      entry.worker.off("exit", onExit);
      healthy ? release(entry) : replace(entry);
    };
    const fail = (error) => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
      console.error("serve-pool: request failed:", error?.message ?? error);
      finish(false);
    };
    const onExit = (code) => fail(new Error(`worker exited with code ${code}`));
    entry.worker.once("exit", onExit);
    let answered = false;
    const upstream = http.request(
      { agent, host: "127.0.0.1", port: entry.port, method: request.method, path: request.url, headers: request.headers },
      (answer) => {
        answered = true;
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
        answer.once("end", () => finish(true));
        answer.once("error", fail);
      },
    );
    upstream.once("error", (error) => {
      // The worker answered before reading the body to its end (a body over the cap is
      // refused after one byte past it) and closed: the answer stands; the rest of the
      // client's upload is read and dropped.
      if (answered) {
        request.unpipe(upstream);
        request.resume();
        return;
      }
      fail(error);
    });
    // A client gone mid-request: its worker may still be busy with it, so it is replaced.
    request.once("aborted", () => {
      upstream.destroy();
      finish(false);
    });
    request.pipe(upstream);
  });
  server.listen(port, host, () => console.error(`serve-pool: ${size} workers, listening on ${host}:${port}`));
}

async function serveInWorker({ module, modules }) {
  try {
    const { HTTPServer } = await import("@bytecodealliance/preview2-shim/http");
    const { WASIShim } = await import("@bytecodealliance/preview2-shim/instantiation");
    const mod = await import(module);
    const instance = mod.instantiate((path) => modules[path], new WASIShim().getImportObject());
    const server = new HTTPServer(instance.incomingHandler);
    server.listen(0, "127.0.0.1");
    parentPort.postMessage({ port: server.address().port });
  } catch (error) {
    parentPort.postMessage({ error: error?.stack ?? String(error) });
  }
}
