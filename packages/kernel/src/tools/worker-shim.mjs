// The one worker entry of the tool pool. Node 20 cannot import TypeScript, so this plain module
// loads a tool's TypeScript worker module through jiti (a JavaScript one natively), calls the
// named export, and answers with data ({ ok, value } or { ok, error }) rather than a thrown error:
// error classes and their fields do not survive the thread boundary. Progress goes through the task's MessagePort; the answer says
// how many progress messages were posted, so the main thread can wait for all of them.
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** jiti's fs cache: the rule of `jitiCacheDir()` in session/paths.ts, which this plain module cannot import. */
function cacheDir() {
  if (process.env.MYPI_JITI_CACHE) return process.env.MYPI_JITI_CACHE;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "mypi", "jiti");
}

/** jiti, started on the first TypeScript module: compiled JavaScript (the builtin search worker) loads natively. */
let jiti;
async function importModule(module) {
  const path = module.startsWith("file:") ? fileURLToPath(module) : module;
  if (/\.[cm]?js$/.test(path)) return import(module.startsWith("file:") ? module : pathToFileURL(path).href);
  if (jiti === undefined) {
    const { createJiti } = await import("jiti");
    jiti = createJiti(import.meta.url, { fsCache: cacheDir() });
  }
  return jiti.import(path);
}

/** Loaded worker functions by module and export: jiti's import costs far more than a task. */
const functions = new Map();

async function load(module, exportName) {
  const key = `${exportName}\0${module}`;
  let fn = functions.get(key);
  if (fn === undefined) {
    const mod = await importModule(module);
    fn = exportName === "default" ? (mod?.default ?? mod) : mod?.[exportName];
    if (typeof fn !== "function") return undefined;
    functions.set(key, fn);
  }
  return fn;
}

const NOT_CLONEABLE =
  "The worker function returned a value that cannot be sent between threads (a function, a class instance or similar); return plain data.";

function cloneable(value) {
  try {
    structuredClone(value);
    return true;
  } catch (error) {
    if (error?.name === "DataCloneError") return false;
    throw error;
  }
}

function errorData(error) {
  if (typeof error === "object" && error !== null && "message" in error) {
    return {
      name: typeof error.name === "string" ? error.name : "Error",
      message: String(error.message),
      stack: typeof error.stack === "string" ? error.stack : undefined,
    };
  }
  return { name: typeof error, message: String(error) };
}

/**
 * The port of the task running now. process.exit() in a worker function ends the thread without
 * an answer, so the exit is reported on the task's port, where the main thread can tell it apart
 * from a crash (out of memory), which tinypool reports itself.
 */
let runningPort;
process.on("exit", (code) => runningPort?.postMessage({ exitCode: code }));

/** @param {{ module: string, exportName: string, args: unknown, cwd: string, data: unknown, port: import("node:worker_threads").MessagePort }} task */
export default async function runWorkerTool(task) {
  let posted = 0;
  runningPort = task.port;
  const progress = (partial) => {
    task.port.postMessage({ progress: partial });
    posted++;
  };
  try {
    const fn = await load(task.module, task.exportName);
    if (fn === undefined) {
      return {
        ok: false,
        progress: posted,
        error: {
          name: "Error",
          message: `The worker module ${task.module} has no exported function "${task.exportName}".`,
        },
      };
    }
    const value = await fn(task.args, { cwd: task.cwd, data: task.data, progress });
    // A value the thread boundary cannot carry (a function, a symbol) fails in tinypool's
    // postMessage, after this function returned, and reaches the main thread as an error with
    // no message (Node 22 and later) or as a plain object (Node 20). Cloning it here first, with
    // the algorithm postMessage uses, tells the caller why on every Node.
    if (!cloneable(value))
      return { ok: false, progress: posted, error: { name: "DataCloneError", message: NOT_CLONEABLE } };
    return { ok: true, progress: posted, value };
  } catch (error) {
    return { ok: false, progress: posted, error: errorData(error) };
  } finally {
    runningPort = undefined;
  }
}
